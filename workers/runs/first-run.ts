import type { JsonObject } from '../../shared/api.js';
import type { RunJobData } from '../../shared/jobs.js';
import { commitFirstRun } from '../../runs/commit.js';
import { agentNotFound, type RunResult } from '../../runs/run-endings.js';
import { keptChanges } from './kept-changes.js';
import { responseOfRun, runAgent, type Ran } from './run-agent.js';
import type { RunDeps, RunEventSink } from './run-deps.js';
import { freshStart, queryOf, type RunStart } from './run-start.js';
import { confirmSession } from './session-watch.js';
import { speculate } from './speculation.js';

/**
 * A new conversation's first run: nothing to wait for or read but the agent's latest version, and one
 * statement (shared with the first runs ending at the same time) records everything it leaves (the
 * conversation is created even when the run keeps nothing, so its convid can go on).
 */
export async function runFirst(deps: RunDeps, data: RunJobData, inputs: JsonObject, sink: RunEventSink, signal: AbortSignal): Promise<RunResult> {
  const startedAt = deps.clock.now();
  const started = await startAndRun(deps, data, inputs, sink, signal);
  if (!started) return agentNotFound(data);
  const { start, ran } = started;
  const outcome = await confirmSession(deps, data.sessionId, ran.outcome);
  const changes = keptChanges(deps, data, undefined, start, outcome, startedAt);
  return commitFirstRun(deps.firstRuns, data, changes, { startedAt, agentVersion: start.agent.version, response: responseOfRun(data, ran, outcome), query: queryOf(start) });
}

/**
 * Runs the latest version (undefined when there is no such agent). When this worker has read the
 * agent's latest version before, the run starts on that one while the latest is read again, so the
 * read no longer comes before the sandbox; a newer version found by the read stops it, and the run
 * starts again on that one (runOnGuess).
 */
async function startAndRun(deps: RunDeps, data: RunJobData, inputs: JsonObject, sink: RunEventSink, signal: AbortSignal): Promise<{ start: RunStart; ran: Ran } | undefined> {
  const guess = data.draft ? undefined : deps.agents.lastRead(data.agentName);
  let latestVersion: number | undefined;
  if (guess !== undefined) {
    const latest = deps.agents.latestVersion(deps.db, data.agentName);
    const confirmed = await runOnGuess(deps, data, inputs, sink, signal, guess, latest);
    if (confirmed) return confirmed;
    latestVersion = await latest;
    if (latestVersion === undefined) return undefined;
  }
  const start = await freshStart(deps, deps.db, data, undefined, inputs, latestVersion);
  return start && { start, ran: await runAgent(deps, data, start, sink, signal) };
}

/**
 * Runs version `guess` while `latest` is read, as a speculation (speculation.ts): it reaches nothing
 * outside the sandbox until the read confirms the version. Undefined when the read found another
 * version (the run was stopped, nothing of it sent) or failed (the caller sees the read's error when it
 * awaits `latest`).
 */
async function runOnGuess(
  deps: RunDeps,
  data: RunJobData,
  inputs: JsonObject,
  sink: RunEventSink,
  signal: AbortSignal,
  guess: number,
  latest: Promise<number | undefined>,
): Promise<{ start: RunStart; ran: Ran } | undefined> {
  const guessed = speculate(sink, signal, latest.then((version) => version === guess));
  try {
    const start = await freshStart(deps, deps.db, data, undefined, inputs, guess);
    if (!start) return undefined;
    const ran = await runAgent(deps, data, start, guessed.sink, guessed.signal, guessed.hold);
    await guessed.hold;
    return guessed.wrong() ? undefined : { start, ran };
  } finally {
    guessed.end();
  }
}
