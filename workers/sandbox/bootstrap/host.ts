import { maxPendingCalls } from '../sandbox-protocol.js';
import { parseJson, RealError, RealTypeError, toJson } from './intrinsics.js';

/**
 * The isolate's end of the sys bridge (host-calls.ts is the host's). Every host call carries its
 * run's token and the host answers only runs in progress, so a promise left over from an earlier run
 * cannot act in a later one. Payloads and replies cross as JSON strings.
 *
 * An async call is sent with `applyIgnored` and carries a number; the host answers it later through
 * StartRun's `reply` step (agent-context.ts), which settles the call's promise here. Each crossing
 * wakes a thread on the other side: isolated-vm's `apply` would cross three times (the call, the
 * promise of its reply, the reply), this crosses twice.
 */

/**
 * The host's references as isolated-vm hands them in (agent-context.ts `hostReferences`). Every call
 * carries the output queued since the last one (`outbox`, JSON, "" when none): the host makes it
 * before the call.
 */
export interface Host {
  readonly sync: { applySync(receiver: undefined, args: [token: number, op: SyncOp, payload: string, outbox: string]): string };
  readonly async: {
    applyIgnored(receiver: undefined, args: [token: number, op: AsyncOp, payload: string, outbox: string, call: number]): void;
  };
}

export type SyncOp = 'say' | 'html' | 'image' | 'log' | 'fail' | 'now' | 'trace' | 'tooManyPending' | 'fetchClose' | 'flush' | 'history';
export type AsyncOp = 'sleep' | 'fetch' | 'fetchRead' | 'fetchRelay' | 'ask' | 'call' | 'returned';
/**
 * Text written with sys.write (token streaming): nothing comes back, so it waits in the run's outbox
 * for the next host call. Parts and log lines still cross at once: one made just before code that
 * never yields (a busy loop ended by its timeout or a cancel) is still kept with the run.
 */
export type QueuedOp = 'write';
export type Payload = Record<string, unknown>;

/** One run as the isolate sees it. `pending` counts its async host calls not yet settled in here. */
export interface Run {
  readonly host: Host;
  readonly token: number;
  pending: number;
  /** Its Math.random's state (run-globals.ts): seeded by the run, so a replay draws the same numbers. */
  seed: number;
  /** Draft validation: calls carry their site, variable changes are reported. */
  readonly trace: boolean;
  /** Output made since the last host call, in order, and its size in characters. */
  outbox: Array<[QueuedOp, Payload]>;
  outboxSize: number;
}

/** Host replies: `{ok:true, value}` or `{ok:false, error:{kind, message}}`. */
type Reply = { ok: true; value: unknown } | { ok: false; error: { kind: 'type' | 'fetch' | 'halt'; message: string } };

// The FetchErrors this context made. The bundle is evaluated once per context, so this is the
// context's own, as every other closure of the bootstrap.
const fetchErrors = new WeakSet<object>();

/** Whether `value` is a sys.fetch failure (the host classifies those as callFailed when uncaught). */
export function isFetchError(value: unknown): value is Error {
  return value !== null && typeof value === 'object' && fetchErrors.has(value);
}

// Kind `type` becomes a TypeError, `fetch` a FetchError; `halt` (the run has ended) only unwinds.
function reply(text: string): unknown {
  const answer = parseJson(text) as Reply;
  if (answer.ok) return answer.value;
  const error = answer.error;
  if (error.kind === 'type') throw new RealTypeError(error.message);
  if (error.kind === 'fetch') {
    const err = new RealError(error.message);
    err.name = 'FetchError';
    fetchErrors.add(err);
    throw err;
  }
  throw new RealError(error.message);
}

// The async calls of this context's runs waiting for their reply, by number, with the run that made
// each. The bundle is evaluated once per context, so the numbers are the context's own, and a reply
// can only reach the call it names.
const awaitingReply = new Map<number, { run: Run; settle: (replyText: string) => void }>();
let lastCall = 0;

/**
 * StartRun's `reply` step: settles async call `call` with the host's reply, and answers the run that
 * made it (`enter`: main.ts makes it the current run, which the context's Date, console and
 * Math.random speak for); a call no longer awaited is ignored. The code the reply resumes runs in this
 * entry's microtasks, which drain before the isolate takes its next task: no other run's code runs
 * before the next entry names its run.
 */
export function settleCall(call: number, replyText: string, enter: (run: Run) => void): void {
  const awaited = awaitingReply.get(call);
  if (awaited === undefined) return;
  awaitingReply.delete(call);
  enter(awaited.run);
  awaited.settle(replyText);
}

export function callSync(run: Run, op: SyncOp, payload: Payload): unknown {
  return reply(run.host.sync.applySync(undefined, [run.token, op, toJson(payload), takeOutbox(run)]));
}

export async function callAsync(run: Run, op: AsyncOp, payload: Payload): Promise<unknown> {
  // The host ends the run (errorInAgent) and the reply unwinds; the call is never made.
  if (run.pending >= maxPendingCalls) callSync(run, 'tooManyPending', {});
  run.pending += 1;
  const call = (lastCall += 1);
  try {
    const replied = new Promise<string>((resolve) => awaitingReply.set(call, { run, settle: resolve }));
    run.host.async.applyIgnored(undefined, [run.token, op, toJson(payload), takeOutbox(run), call]);
    return reply(await replied);
  } finally {
    awaitingReply.delete(call);
    run.pending -= 1;
  }
}

/**
 * Tells the host that the run's agent returned (or threw), as call 0, which wants no reply. The host
 * gets the run's result once the isolate's microtasks have drained; a loop of promise callbacks the
 * agent left running never lets them, and the host ends such a run (run-watch.ts) instead of waiting
 * for its max runtime. Sent only when the host waits for the result that way (main.ts).
 */
export function noticeReturned(run: Run): void {
  run.host.async.applyIgnored(undefined, [run.token, 'returned', '', '', 0]);
}

/**
 * Queues written text. Each crossing into the host costs a thread hand-off both ways (~60 µs of CPU
 * here), so the text rides on the next host call instead of making its own: the fetch read a
 * streaming agent awaits next, the run's result, or, at the latest, one `flush` call once the code
 * running now yields (a microtask). Past `maxOutboxSize` characters or `maxOutboxItems` items it is
 * sent at once, so a flood meets the host's output limit as soon as it would have, never piling up
 * in here.
 */
export function queueOutput(run: Run, op: QueuedOp, payload: Payload): void {
  run.outbox.push([op, payload]);
  run.outboxSize += typeof payload.text === 'string' ? payload.text.length : 0;
  if (run.outbox.length >= maxOutboxItems || run.outboxSize >= maxOutboxSize) callSync(run, 'flush', {});
  else if (run.outbox.length === 1) afterMicrotasks(flushDelay, () => flushQueued(run));
}

/**
 * Microtask turns the queued text waits before it is flushed on its own. A streaming agent's next
 * read (its `for await` stepping an async generator, then the queued read) is made within a few
 * turns and carries it; flushing at the first turn would cross twice per token instead of once.
 */
const flushDelay = 8;

function afterMicrotasks(turns: number, then: () => void): void {
  if (turns === 0) return then();
  void settled.then(() => afterMicrotasks(turns - 1, then));
}

const maxOutboxItems = 256;
const maxOutboxSize = 64 * 1024;
const settled = Promise.resolve();

/** The outbox as JSON for the host (the run's result carries what is left at its end), emptied. */
export function takeOutbox(run: Run): string {
  if (run.outbox.length === 0) return '';
  const text = toJson(run.outbox);
  run.outbox = [];
  run.outboxSize = 0;
  return text;
}

function flushQueued(run: Run): void {
  if (run.outbox.length === 0) return;
  try {
    callSync(run, 'flush', {});
  } catch {
    // The run has ended (the reply only unwinds): nothing is waiting for this output.
  }
}
