import type { JsonObject } from '../../shared/api.js';
import type { RunJobData } from '../../shared/jobs.js';
import { mayRunOn } from '../../runs/conversation-rules.js';
import { agentNotFound, type RunResult } from '../../runs/run-endings.js';
import type { InlineDecline, InlineEntry } from '../sandbox/sandbox.types.js';
import { commitRan } from './first-run.js';
import { leftByRun } from './kept-changes.js';
import { runAgent, type Ran } from './run-agent.js';
import type { RunDeps, RunEventSink } from './run-deps.js';
import { freshStart, type RunStart } from './run-start.js';

/**
 * Why a run was not answered inline: as InlineDecline, it waited on an async sys call ('waits'), or
 * its conversation needs a worker ('conversation': paused, gone, not the caller's, or its agent gone;
 * the worker answers what a worker answers then).
 */
export type NotInline = { queue: InlineDecline | 'waits' | 'conversation' };

/** What the caller decides of an inline run's entry, and is told of it (InlineEntry). */
export type EntryHooks = Pick<InlineEntry, 'mayLoad' | 'entered'>;

/** An inline run's parts are its answer's: nothing goes out while it runs. */
const noSink: RunEventSink = { part: () => undefined, delta: () => undefined, trace: () => undefined };

/**
 * A new conversation's first run, answered where the call arrived (workers/inline-runs.ts), entered
 * synchronously into its sandbox and committed as a worker commits a first run. As a worker's
 * (first-run.ts), it starts on the agent version last read here, its commit fenced on it; when a newer
 * one was published meanwhile, that commit keeps nothing and the run starts over on the latest, read
 * then. NotInline when it is not such a run after all; nothing of it was kept or sent then: an async
 * sys call stops it before the call acts.
 */
export async function runInline(deps: RunDeps, data: RunJobData, inputs: JsonObject, entry: EntryHooks): Promise<RunResult | NotInline> {
  const guess = deps.agents.lastRead(data.agentName);
  if (guess !== undefined) {
    const guessed = await runOnVersion(deps, data, inputs, entry, guess);
    if (guessed !== 'stale') return guessed;
  }
  const read = await runOnVersion(deps, data, inputs, entry, undefined);
  if (read === 'stale') throw new Error('an inline run committed without a fence came out stale');
  return read;
}

/** Runs `version` (or the latest, read now); 'stale' when that version is no longer the latest. */
async function runOnVersion(deps: RunDeps, data: RunJobData, inputs: JsonObject, entry: EntryHooks, version: number | undefined): Promise<RunResult | NotInline | 'stale'> {
  const startedAt = deps.clock.now();
  const start = await freshStart(deps, deps.db, data, undefined, inputs, version);
  if (!start) return version === undefined ? agentNotFound(data) : 'stale';
  const ran = await runEntered(deps, data, start, entry);
  if ('queue' in ran) return ran;
  const fence = version === undefined ? undefined : { agentName: data.agentName, version };
  return commitRan(deps, data, start, ran, startedAt, fence);
}

/**
 * A call on an existing conversation whose turn the caller took and found it first in line
 * (RunJobData `turn`, `turnFirst`): the conversation read, the run entered as an inline run, and its
 * commit fenced by the version read, as a worker's (conversation-run.ts). The turn stays the caller's,
 * to end, or to hand to the queued job when this is NotInline: nothing of the run was kept or sent then.
 */
export async function runInlineOnConversation(deps: RunDeps, data: RunJobData, inputs: JsonObject, entry: EntryHooks): Promise<RunResult | NotInline> {
  const startedAt = deps.clock.now();
  const read = await deps.conversations.read({ id: data.convid, latestOf: data.agentName });
  // A resumed ask replays a journal, and a refused call is answered by what a worker records: both go there.
  if (!read || read.pause || !mayRunOn(read.conversation, read.pause, data, startedAt)) return { queue: 'conversation' };
  const start = await freshStart(deps, deps.db, data, read.conversation, inputs, read.latestVersion);
  if (!start) return { queue: 'conversation' };
  const ran = await runEntered(deps, data, start, entry);
  if ('queue' in ran) return ran;
  const { changes, ending } = await leftByRun(deps, data, read.conversation, start, ran, startedAt);
  const result = await deps.commits.commit({ data, version: read.conversation.version, changes, ending });
  if (result === 'wrong') throw new Error('a run that read its conversation came out wrong');
  return result;
}

/**
 * Runs `start` entered synchronously into its sandbox, nothing of it sent: NotInline when it was not
 * over within that entry, or when it made an async sys call (stopped there, before the call acts).
 */
async function runEntered(deps: RunDeps, data: RunJobData, start: RunStart, entry: EntryHooks): Promise<Ran | NotInline> {
  const stop = new AbortController();
  let declined: NotInline | undefined;
  const decline = (why: NotInline['queue']) => void (declined ??= { queue: why });
  // An async sys call awaits this before it acts: the run is stopped there.
  const hold: PromiseLike<void> = {
    then(onSettled, onFailed) {
      decline('waits');
      stop.abort();
      return Promise.resolve().then(onSettled, onFailed);
    },
  };
  const ran = await runAgent(deps, data, start, noSink, stop.signal, { hold, inline: { ...entry, declined: decline } });
  return declined ?? ran;
}
