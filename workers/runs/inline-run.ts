import type { JsonObject } from '../../shared/api.js';
import type { RunJobData } from '../../shared/jobs.js';
import { agentNotFound, type RunResult } from '../../runs/run-endings.js';
import type { InlineDecline, InlineEntry } from '../sandbox/sandbox.types.js';
import { mayRunOn } from '../../runs/conversation-rules.js';
import { commitOnConversation } from './conversation-run.js';
import { commitRan } from './first-run.js';
import { runAgent } from './run-agent.js';
import type { RunDeps, RunEventSink } from './run-deps.js';
import { freshStart } from './run-start.js';

/**
 * Why a run was not answered inline: as InlineDecline; it waited on an async sys call ('waits'); its
 * conversation is one a worker answers for ('conversation'); its commit found the conversation changed
 * since its read ('wrong').
 */
export type NotInline = { queue: InlineDecline | 'waits' | 'conversation' | 'wrong' };

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
  const held = holdAtAsyncCalls();
  const ran = await runAgent(deps, data, start, noSink, held.signal, { hold: held.hold, inline: { ...entry, declined: held.decline } });
  if (held.declined) return held.declined;
  const fence = version === undefined ? undefined : { agentName: data.agentName, version };
  return commitRan(deps, data, start, ran, startedAt, fence);
}

/**
 * A call on an existing conversation whose turn it holds (the conversation had no call running or
 * waiting), answered where it arrived: reads the conversation and the agent's latest version in one
 * statement, runs the agent as a short run, and commits fenced by the version read, as a worker's call
 * on a conversation does (conversation-run.ts). NotInline, nothing of it kept or sent, for what a worker
 * answers instead: a conversation that is paused (the call answers an ask), not the caller's, expired or
 * gone ('conversation'); a run that was not short; a commit the fence refused ('wrong': the state read
 * was not the latest, and a worker reads it again).
 */
export async function runInlineOnConversation(deps: RunDeps, data: RunJobData, inputs: JsonObject, entry: EntryHooks): Promise<RunResult | NotInline> {
  const startedAt = deps.clock.now();
  const read = await deps.conversations.read({ id: data.convid, latestOf: data.agentName });
  if (!read || read.pause || !mayRunOn(read.conversation, undefined, data, startedAt)) return { queue: 'conversation' };
  const { conversation } = read;
  const start = await freshStart(deps, deps.db, data, conversation, inputs, read.latestVersion);
  if (!start) return agentNotFound(data);
  const held = holdAtAsyncCalls();
  const ran = await runAgent(deps, data, start, noSink, held.signal, { hold: held.hold, inline: { ...entry, declined: held.decline } });
  if (held.declined) return held.declined;
  const { committing } = await commitOnConversation(deps, data, { conversation, paused: false, start, ran, startedAt });
  const result = await committing;
  return result === 'wrong' ? { queue: 'wrong' } : result;
}

/**
 * How an inline run is stopped before an async sys call acts (`hold`, which the call awaits first) and
 * why it was declined, if it was: the sandbox tells `decline` of an entry that was not short.
 */
function holdAtAsyncCalls(): { hold: PromiseLike<void>; signal: AbortSignal; decline: (why: NotInline['queue']) => void; readonly declined: NotInline | undefined } {
  const stop = new AbortController();
  let declined: NotInline | undefined;
  const decline = (why: NotInline['queue']) => void (declined ??= { queue: why });
  const hold: PromiseLike<void> = {
    then(onSettled, onFailed) {
      decline('waits');
      stop.abort();
      return Promise.resolve().then(onSettled, onFailed);
    },
  };
  return {
    hold,
    signal: stop.signal,
    decline,
    get declined() {
      return declined;
    },
  };
}
