import { toStorableText } from '../../shared/storable-text.js';
import { maxPendingCalls } from './sandbox-protocol.js';
import { AgentFault, AgentTypeError } from './error-codes.js';
import { FetchFailure } from '../outbound-http/http-fetch.js';
import { isReplaying } from './journal.js';
import { callAsk, callFetch, callNow, callSleep } from './journaled-calls.js';
import { callAgent } from './agent-calls.js';
import { addPart, imagePart, writeText, type OutputChange } from './output.js';
import { errorInAgent, failCommand, hostError } from './sandbox-endings.js';
import { emitChange, hasEnded, report, type Session } from './session.js';
import { callFetchClose, callFetchRead, callFetchRelay } from './streamed-fetch.js';
import { isTracing, traceAsyncCall, traceSyncCall, traceVariableChange } from './trace-calls.js';
import { inSysCallSpan } from '../tracing/sys-call-spans.js';

/**
 * The host end of the sys bridge. The isolate calls `handleSyncCall` / `handleAsyncCall` with an op
 * name and a JSON payload, and gets back a JSON reply (see bootstrap/host.ts). Handlers throw
 * AgentTypeError or FetchFailure to raise an error in the agent; anything that ends the run
 * (divergence, output too large, a host bug) ends it here and the isolate is disposed.
 */

type Payload = Record<string, unknown>;
type ReplyError = { kind: 'type' | 'fetch' | 'halt'; message: string };

/** sys.write's text appended to the output; a relay's pieces are written so too. */
const writeOutput = (session: Session, p: Payload) => emitOutput(session, () => writeText(session.output, stringField(p, 'text')));

/** What the isolate queues in a run's outbox (bootstrap/host.ts `queueOutput`): made in order before the call that carries it. */
const queuedOps: Record<string, (session: Session, payload: Payload) => void> = {
  write: writeOutput,
};

const syncOps: Record<string, (session: Session, payload: Payload) => unknown> = {
  say: (session, p) => emitOutput(session, () => addPart(session.output, { type: 'text', text: stringField(p, 'text') })),
  html: (session, p) => emitOutput(session, () => addPart(session.output, { type: 'html', html: stringField(p, 'html') })),
  log: (session, p) => logLine(session, stringField(p, 'line')),
  image: (session, p) => emitOutput(session, () => addPart(session.output, imageFromPayload(p))),
  flush: () => null,
  fail: (session, p) => session.end(failCommand(stringField(p, 'message'))),
  now: (session) => callNow(session),
  history: (session) => session.run.history,
  fetchClose: callFetchClose,
  trace: (session, p) => (isTracing(session) ? traceVariableChange(session, p) : undefined),
  tooManyPending: () => {
    throw tooManyPendingCalls;
  },
};

const tooManyPendingCalls = new AgentFault(
  `too many pending calls: a run may wait on at most ${maxPendingCalls} sys calls (sleep, fetch, ask, call) at once`,
);

/** Ends the run errorInAgent for passing maxPendingCalls (DESIGN §12); the reply unwinds the isolate. */
export function endForTooManyPendingCalls(session: Session): string {
  return replyWithError(session, tooManyPendingCalls);
}

const asyncOps: Record<string, (session: Session, payload: Payload) => Promise<unknown>> = {
  sleep: callSleep,
  fetch: callFetch,
  fetchRead: callFetchRead,
  // Each piece relayed is written as the agent's own sys.write would be.
  fetchRelay: (session, p) => callFetchRelay(session, p, (text) => makeQueued(session, 'write', writeOutput, { text })),
  ask: callAsk,
  call: callAgent,
};

export function handleSyncCall(session: Session, op: unknown, payloadText: unknown, outbox: unknown): string {
  try {
    const handler = typeof op === 'string' ? syncOps[op] : undefined;
    if (!handler || hasEnded(session)) return haltReply();
    makeQueuedOutput(session, outbox);
    if (hasEnded(session)) return haltReply();
    const payload = parsePayload(payloadText, op);
    const value = isTracing(session) ? traceSyncCall(session, op as string, payload, () => handler(session, payload)) : handler(session, payload);
    return JSON.stringify({ ok: true, value: value ?? null });
  } catch (err) {
    return replyWithError(session, err);
  }
}

export async function handleAsyncCall(session: Session, op: unknown, payloadText: unknown, outbox: unknown): Promise<string> {
  try {
    const handler = typeof op === 'string' ? asyncOps[op] : undefined;
    if (!handler || hasEnded(session)) return haltReply();
    makeQueuedOutput(session, outbox);
    if (session.run.hold) await session.run.hold;
    if (hasEnded(session)) return haltReply();
    const payload = parsePayload(payloadText, op);
    const call = () => inSysCallSpan(session, op as string, payload, () => handler(session, payload));
    const value = isTracing(session) ? await traceAsyncCall(session, op as string, payload, call) : await call();
    return JSON.stringify({ ok: true, value: value ?? null });
  } catch (err) {
    return replyWithError(session, err);
  }
}

/**
 * Makes the output a host call carries (or a run's result), in the order the agent made it. What
 * fails (output past its limit) ends the run; the rest of the outbox is dropped with it.
 */
export function makeQueuedOutput(session: Session, outbox: unknown): void {
  if (typeof outbox !== 'string' || outbox === '' || hasEnded(session)) return;
  const items: unknown = JSON.parse(outbox, outbox.includes('\\u') ? storableStrings : undefined);
  if (!Array.isArray(items)) throw new AgentTypeError('malformed output');
  for (const item of items) {
    if (hasEnded(session)) return;
    const [op, payload] = Array.isArray(item) ? (item as [unknown, unknown]) : [];
    const handler = typeof op === 'string' ? queuedOps[op] : undefined;
    if (!handler || typeof payload !== 'object' || payload === null) throw new AgentTypeError('malformed output');
    makeQueued(session, op as string, handler, payload as Payload);
  }
}

/** Makes one queued output (an outbox item, or a piece a relay writes), traced as a call of its op in a traced run. */
function makeQueued(session: Session, op: string, handler: (session: Session, payload: Payload) => void, payload: Payload): void {
  if (isTracing(session)) traceSyncCall(session, op, payload, () => handler(session, payload));
  else handler(session, payload);
}

/** The reply to a call that failed: an error the agent sees, or a halt once the failure has ended the run. */
export function replyWithError(session: Session, err: unknown): string {
  if (err instanceof AgentTypeError) return errorReply({ kind: 'type', message: err.message });
  if (err instanceof FetchFailure) return errorReply({ kind: 'fetch', message: err.message });
  session.end(err instanceof AgentFault ? errorInAgent(err) : hostError(err));
  return haltReply();
}

/** The reply to a call from a run that has ended: the isolate side throws to unwind. */
export function haltReply(): string {
  return errorReply({ kind: 'halt', message: 'the run has ended' });
}

function errorReply(error: ReplyError): string {
  return JSON.stringify({ ok: false, error });
}

/** Output made while replaying was already sent before the pause: collect and emit only live output. */
function emitOutput(session: Session, change: () => OutputChange): void {
  if (isReplaying(session.journal)) return;
  emitChange(session, change());
}

function logLine(session: Session, line: string): void {
  if (!isReplaying(session.journal)) report(session, () => session.run.onTimeline?.({ kind: 'log', at: new Date().toISOString(), text: line }));
}

function imageFromPayload(p: Payload) {
  const mimeType = p.mimeType;
  if (mimeType !== null && typeof mimeType !== 'string') throw new AgentTypeError('sys.image: mimeType must be a string');
  return imagePart(stringField(p, 'source'), mimeType);
}

/**
 * The call's arguments. Text that cannot be stored (U+0000, unpaired surrogates) becomes U+FFFD in
 * everything but a fetch, whose body and headers go out as the agent wrote them: output, asks and
 * messages are kept in PostgreSQL.
 */
function parsePayload(text: unknown, op: unknown): Payload {
  // The isolate's JSON.stringify writes U+0000 and unpaired surrogates as \u escapes: without one, there is nothing to replace.
  const clean = op === 'fetch' || typeof text !== 'string' || !text.includes('\\u');
  const payload: unknown = typeof text === 'string' ? JSON.parse(text, clean ? undefined : storableStrings) : undefined;
  if (typeof payload !== 'object' || payload === null) throw new AgentTypeError('malformed sys call');
  return payload as Payload;
}

function storableStrings(_key: string, value: unknown): unknown {
  return typeof value === 'string' ? toStorableText(value) : value;
}

function stringField(payload: Payload, key: string): string {
  const value = payload[key];
  if (typeof value !== 'string') throw new AgentTypeError(`${key} must be a string`);
  return value;
}
