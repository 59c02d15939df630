import type { JsonObject } from '../../shared/api.js';
import type { RunJobData } from '../../shared/jobs.js';
import { commitFirstRun } from '../../runs/commit.js';
import type { NewIdempotencyKey } from '../../db/schema.js';
import { agentNotFound, isRunAgain, versionMoved, type RunAgain, type RunEnding } from '../../runs/run-endings.js';
import { runOnGuessedVersion } from './version-guess.js';
import { leftByRun } from './kept-changes.js';
import { runAgent, type AgentRun } from './run-agent.js';
import type { RunDeps, RunEventSink } from './run-deps.js';
import { freshStart, type RunStart } from './run-start.js';
import { speculateLazily } from './speculation.js';

/**
 * A new conversation's first run: nothing to wait for or read but the agent's latest version, and one
 * statement (shared with the first runs ending at the same time) records everything it leaves (the
 * conversation is created even when the run keeps nothing, so its convid can go on).
 *
 * When this worker has read the agent's latest version before, the run starts on that one without
 * reading it again (version-guess.ts; runOnGuess): the commit is fenced on it, so a newer version
 * published meanwhile makes the commit keep nothing, and the call runs again on the latest.
 */
export async function runFirst(deps: RunDeps, data: RunJobData, inputs: JsonObject, sink: RunEventSink, signal: AbortSignal): Promise<RunEnding> {
  const startedAt = deps.clock.now();
  return runOnGuessedVersion(deps, data, async (guess) => {
    if (guess !== undefined) return runOnGuess(deps, data, inputs, sink, signal, { guess, startedAt });
    const start = await freshStart(deps, deps.db, data, undefined, inputs);
    if (!start) return agentNotFound(data);
    return commitRan(deps, data, start, await runAgent(deps, data, start, sink, signal), startedAt);
  });
}

/**
 * A run on a guessed version still going this long after its first part reads the latest version, so
 * a streamed call shows its parts while it runs; a short run's parts wait for its commit instead.
 */
const showPartsAfterMs = 5;

/**
 * Runs version `guess` as a speculation (speculation.ts): it reaches nothing outside the sandbox until
 * the guess is confirmed. An async sys call asks for that (the latest version is read then), and so
 * does a part still held back after showPartsAfterMs; a run that does neither is confirmed by its
 * commit, fenced on the guess. RunAgain `versionMoved` when the guess was wrong (the run was stopped or
 * its commit kept nothing; nothing of it was sent).
 */
async function runOnGuess(
  deps: RunDeps,
  data: RunJobData,
  inputs: JsonObject,
  sink: RunEventSink,
  signal: AbortSignal,
  { guess, startedAt }: { guess: number; startedAt: Date },
): Promise<RunEnding | RunAgain> {
  const guessed = speculateLazily(sink, signal, async () => (await deps.agents.latestVersion(deps.db, data.agentName)) === guess, showPartsAfterMs);
  try {
    const start = await freshStart(deps, deps.db, data, undefined, inputs, guess);
    if (!start) return versionMoved();
    const ran = await runAgent(deps, data, start, guessed.sink, guessed.signal, { hold: guessed.hold });
    guessed.stopAsking();
    // Confirmed by the read it asked for, or else by its commit, fenced on the guess.
    const readAsked = guessed.asked();
    if (readAsked) {
      await guessed.decided;
      if (guessed.wrong()) return versionMoved();
    }
    const fence = readAsked ? undefined : { agentName: data.agentName, version: guess };
    const committed = await commitRan(deps, data, start, ran, startedAt, fence);
    guessed.settle(!isRunAgain(committed));
    // Its held parts go out before its end does.
    await guessed.decided;
    return committed;
  } finally {
    // A commit that failed leaves the guess unsettled: nothing of the run goes out.
    guessed.settle(false);
    guessed.end();
  }
}

/**
 * Records what the run left (fenced on the version it guessed, when it did not read it), and the record
 * of its call's Idempotency-Key when given (a short run of the web process).
 */
export async function commitRan(
  deps: RunDeps,
  data: RunJobData,
  start: RunStart,
  ran: AgentRun,
  startedAt: Date,
  fence?: { agentName: string; version: number },
  claim?: NewIdempotencyKey,
): Promise<RunEnding | RunAgain> {
  const { changes, record } = await leftByRun(deps, data, undefined, start, ran, startedAt);
  return commitFirstRun(deps.firstRuns, data, changes, record, fence, claim);
}
