import type { JsonObject } from '../../shared/api.js';
import type { RunJobData } from '../../shared/jobs.js';
import { commitFirstRun } from '../../runs/commit.js';
import { agentNotFound, type RunResult } from '../../runs/run-endings.js';
import { keptChanges } from './kept-changes.js';
import { responseOfRun, runAgent } from './run-agent.js';
import type { RunDeps, RunEventSink } from './run-deps.js';
import { freshStart, queryOf } from './run-start.js';
import { confirmSession } from './session-watch.js';

/**
 * A new conversation's first run: nothing to wait for or read, and one statement (shared with the
 * first runs ending at the same time) records everything it leaves (the conversation is created even when the run keeps nothing, so its convid can go on).
 */
export async function runFirst(deps: RunDeps, data: RunJobData, inputs: JsonObject, sink: RunEventSink, signal: AbortSignal): Promise<RunResult> {
  const startedAt = deps.clock.now();
  const start = await freshStart(deps, deps.db, data, undefined, inputs);
  if (!start) return agentNotFound(data);
  const ran = await runAgent(deps, data, start, sink, signal);
  const outcome = await confirmSession(deps, data.sessionId, ran.outcome);
  const changes = keptChanges(deps, data, undefined, start, outcome, startedAt);
  return commitFirstRun(deps.firstRuns, data, changes, { startedAt, agentVersion: start.agent.version, response: responseOfRun(data, ran, outcome), query: queryOf(start) });
}
