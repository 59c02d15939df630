import type { RunJobData } from '../../shared/jobs.js';
import { isRunAgain, type RunAgain } from '../../runs/run-endings.js';
import type { RunDeps } from './run-deps.js';

/**
 * A new conversation's first run starts on the agent version this process read last, when it has read
 * one, without reading it again: `runOn(guess)`, whose commit is fenced on the guess, so a newer
 * version published meanwhile makes it keep nothing (RunAgain `versionMoved`). The call then runs on
 * the latest version, read then: `runOn(undefined)`. A draft's run never guesses (its draft is read).
 * The one place the guess is made, for a worker's first runs (first-run.ts) and a web process's short
 * runs (inline-run.ts).
 */
export async function runOnGuessedVersion<T extends object>(
  deps: Pick<RunDeps, 'agents'>,
  data: RunJobData,
  runOn: (version: number | undefined) => Promise<T | RunAgain>,
): Promise<T> {
  const guess = data.draft ? undefined : deps.agents.lastRead(data.agentName);
  if (guess !== undefined) {
    const guessed = await runOn(guess);
    if (!isRunAgain(guessed)) return guessed;
  }
  const read = await runOn(undefined);
  if (isRunAgain(read)) throw new Error('a first run on the version read then was told to run again');
  return read;
}
