import type { JsonObject } from '../../shared/api.js';
import type { RunJobData } from '../../shared/jobs.js';
import { agentNotFound, versionMoved, type RunAgain, type RunEnding } from '../../runs/run-endings.js';
import type { InlineDecline, InlineEntry } from '../sandbox/sandbox.types.js';
import { IdempotencyKeyTakenError } from '../../runs/commit.js';
import type { NewIdempotencyKey } from '../../db/schema.js';
import { commitRan } from './first-run.js';
import { runAgentInline } from './run-agent.js';
import type { RunDeps, RunEventSink } from './run-deps.js';
import { freshStart } from './run-start.js';
import { runOnGuessedVersion } from './version-guess.js';

/**
 * Why a run was not answered inline: as InlineDecline, or it waited on an async sys call ('waits');
 * or `withdrawn`: it ran, but its `mayCommit` said no, or its Idempotency-Key was recorded by another
 * call first, so nothing of it was kept.
 */
export type NotInline = { queue: InlineDecline | 'waits' } | { withdrawn: true };

/** An inline run's parts are its answer's: nothing goes out while it runs. */
const noSink: RunEventSink = { part: () => undefined, delta: () => undefined, trace: () => undefined };

/**
 * A new conversation's first run, answered where the call arrived (workers/inline-runs.ts), entered
 * synchronously into its sandbox and committed as a worker commits a first run. As a worker's
 * (first-run.ts), it starts on the agent version last read here, its commit fenced on it; when a newer
 * one was published meanwhile, that commit keeps nothing and the run starts over on the latest, read
 * then (version-guess.ts). NotInline when it is not such a run after all; nothing of it was kept or sent then: an async
 * sys call stops it before the call acts. `mayCommit`, when given, is awaited before the commit: a run
 * has no effect outside until then, so its caller may run it while it still learns whether the run
 * is its to keep (a child run's place being taken). `claim`: the record of the call's Idempotency-Key,
 * written by the commit (DESIGN §4); when another call with the key was recorded first, nothing of the
 * run is kept: `withdrawn`.
 */
export async function runInline(deps: RunDeps, data: RunJobData, inputs: JsonObject, entry: InlineEntry, { mayCommit, claim }: InlineCommit = {}): Promise<RunEnding | NotInline> {
  return runOnGuessedVersion(deps, data, (version) => runOnVersion(deps, data, inputs, entry, version, { mayCommit, claim }));
}

/** What an inline run's commit waits for, and writes besides the run (runInline). */
export interface InlineCommit {
  mayCommit?: PromiseLike<boolean> | undefined;
  claim?: NewIdempotencyKey | undefined;
}

/** Runs `version` (or the latest, read now); RunAgain `versionMoved` when that version is no longer the latest. */
async function runOnVersion(
  deps: RunDeps,
  data: RunJobData,
  inputs: JsonObject,
  entry: InlineEntry,
  version: number | undefined,
  { mayCommit, claim }: InlineCommit,
): Promise<RunEnding | NotInline | RunAgain> {
  const startedAt = deps.clock.now();
  const start = await freshStart(deps, deps.db, data, undefined, inputs, version);
  if (!start) return version === undefined ? agentNotFound(data) : versionMoved();
  const stop = new AbortController();
  let waits = false;
  // An async sys call awaits this before it acts: the run is stopped there.
  const hold: PromiseLike<void> = {
    then(onSettled, onFailed) {
      waits = true;
      stop.abort();
      return Promise.resolve().then(onSettled, onFailed);
    },
  };
  const ran = await runAgentInline(deps, data, start, noSink, stop.signal, { hold, inline: entry });
  // Declined by the sandbox, or stopped at its first async sys call: nothing of it was sent or kept.
  if ('declined' in ran) return { queue: ran.declined };
  if (waits) return { queue: 'waits' };
  if (mayCommit && !(await mayCommit)) return { withdrawn: true };
  const fence = version === undefined ? undefined : { agentName: data.agentName, version };
  return commitRan(deps, data, start, ran, startedAt, fence, claim).catch((err: unknown) => {
    if (err instanceof IdempotencyKeyTakenError) return { withdrawn: true as const };
    throw err;
  });
}
