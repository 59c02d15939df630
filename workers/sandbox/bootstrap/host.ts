import { maxPendingCalls } from '../sandbox-protocol.js';
import { parseJson, RealError, RealTypeError, toJson } from './intrinsics.js';

/**
 * The isolate's end of the sys bridge (host-calls.ts is the host's). Every host call carries its
 * run's token and the host answers only the current one, so a promise left over from an earlier run
 * cannot act in a later one. Payloads and replies cross as JSON strings.
 */

/** The host's references as isolated-vm hands them in (agent-context.ts `hostReferences`). */
export interface Host {
  readonly sync: { applySync(receiver: undefined, args: [token: number, op: SyncOp, payload: string]): string };
  readonly async: {
    apply(receiver: undefined, args: [token: number, op: AsyncOp, payload: string], options: object): Promise<string>;
  };
}

export type SyncOp = 'say' | 'html' | 'image' | 'write' | 'log' | 'fail' | 'now' | 'trace' | 'tooManyPending';
export type AsyncOp = 'sleep' | 'fetch' | 'ask';
export type Payload = Record<string, unknown>;

/** One run as the isolate sees it. `pending` counts its async host calls not yet settled in here. */
export interface Run {
  readonly host: Host;
  readonly token: number;
  pending: number;
  /** Draft validation: calls carry their site, variable changes are reported. */
  readonly trace: boolean;
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

// Null-prototype options: isolated-vm reads them, and must not find an agent's Object.prototype getters.
const asyncOptions = { __proto__: null, result: { __proto__: null, promise: true } };

export function callSync(run: Run, op: SyncOp, payload: Payload): unknown {
  return reply(run.host.sync.applySync(undefined, [run.token, op, toJson(payload)]));
}

export async function callAsync(run: Run, op: AsyncOp, payload: Payload): Promise<unknown> {
  // The host ends the run (errorInAgent) and the reply unwinds; the call is never made.
  if (run.pending >= maxPendingCalls) callSync(run, 'tooManyPending', {});
  run.pending += 1;
  try {
    return reply(await run.host.async.apply(undefined, [run.token, op, toJson(payload)], asyncOptions));
  } finally {
    run.pending -= 1;
  }
}
