import { normaliseAskSpec } from './ask-spec.js';
import { AgentTypeError } from './error-codes.js';
import { releaseFetchSlot, takeFetchSlot } from '../outbound-http/fetch-slots.js';
import { fetchPoolKey } from '../outbound-http/fetch-agents.js';
import { FetchFailure, httpFetch, refuseUnsendable, type FetchRequest, type FetchResult } from '../outbound-http/http-fetch.js';
import { chargeJournal, recordEntry, ReplayDivergedError, sameJson, snapshotJournal, takeReplayed, type EntryOf } from './journal.js';
import type { Answers } from '../../shared/api.js';
import { asked } from './sandbox-endings.js';
import type { Session } from './session.js';
import { callFetchStream, type StreamHead } from './streamed-fetch.js';
import { readVariables } from './variables.js';
import { noteFetch } from './fetch-timeline.js';

/**
 * The non-deterministic sys calls. Each first takes its recorded entry while replaying (returning the
 * recorded result at once) and otherwise runs live and records what happened.
 */

const defaultFetchTimeoutMs = 10_000;
const maxTimerMs = 2 ** 31 - 1; // setTimeout fires at once beyond this

export function callNow(session: Session): number {
  const replayed = takeReplayed(session.journal, 'now');
  if (replayed) return replayed.value;
  const value = Date.now();
  recordEntry(session.journal, { op: 'now', value });
  return value;
}

export async function callSleep(session: Session, payload: Record<string, unknown>): Promise<null> {
  const ms = payload.ms;
  if (typeof ms !== 'number' || !Number.isFinite(ms)) throw new AgentTypeError('sys.sleep(ms): ms must be a finite number');
  const wait = Math.max(0, ms);
  const differs = (e: { ms: number }) => (e.ms === wait ? null : `recorded sleep(${e.ms}), now sleep(${wait})`);
  if (takeReplayed(session.journal, 'sleep', differs)) return null;
  recordEntry(session.journal, { op: 'sleep', ms: wait });
  await delay(wait, session);
  return null;
}

export async function callFetch(session: Session, payload: Record<string, unknown>): Promise<FetchResult | StreamHead> {
  const request = readFetchRequest(payload);
  const requestedTimeoutMs = readTimeout(payload.timeoutMs);
  if (payload.stream === true) return callFetchStream(session, request, requestedTimeoutMs);
  const url = session.mask(request.url);
  const differs = (e: EntryOf<'fetch'>) =>
    e.method === request.method && e.url === url && e.stream === undefined
      ? null
      : `recorded ${e.method} ${e.url}${e.stream ? ' (streamed)' : ''}, now ${request.method} ${url}`;
  const replayed = takeReplayed(session.journal, 'fetch', differs);
  if (replayed) {
    if (replayed.result) return replayed.result;
    throw new FetchFailure(replayed.error ?? `sys.fetch ${request.method} ${request.url} failed: no result was recorded`);
  }
  // The entry takes its place in call order now; the result is filled in when the response comes.
  const entry = recordEntry<EntryOf<'fetch'>>(session.journal, { op: 'fetch', method: request.method, url });
  const called = noteFetch(session, entry);
  try {
    entry.result = await fetchInSlot(session, request, requestedTimeoutMs);
  } catch (err) {
    entry.error = session.mask(err instanceof Error ? err.message : String(err));
    throw err;
  } finally {
    called();
  }
  chargeJournal(session.journal, entry.result.text.length + JSON.stringify(entry.result.headers).length);
  return entry.result;
}

/**
 * Sends the request once it has one of the run's fetch slots (DESIGN §12: 16 in flight; the others
 * wait, in call order). A request that will never be sent fails at once, without waiting. The
 * fetch's own timeout covers the request, from when it gets its slot; the run's deadline bounds the wait.
 */
async function fetchInSlot(session: Session, request: FetchRequest, requestedTimeoutMs: number): Promise<FetchResult> {
  const refused = refuseUnsendable(request);
  if (refused) throw refused;
  const slot = await takeFetchSlot(session.fetchSlots);
  try {
    const timeoutMs = requestedTimeoutMs < session.deadline - Date.now() ? requestedTimeoutMs : null;
    return await httpFetch(request, { allow: session.allow, timeoutMs, abort: slot, pool: fetchPoolKey(session.run.caller, session.run.httpAllow) });
  } finally {
    releaseFetchSlot(session.fetchSlots, slot);
  }
}

export async function callAsk(session: Session, payload: Record<string, unknown>): Promise<Answers | null> {
  const askInput = normaliseAskSpec(payload.spec);
  const differs = (e: { ask: unknown }) => (sameJson(e.ask, askInput) ? null : 'the ask differs from the recorded one');
  const replayed = takeReplayed(session.journal, 'ask', differs);
  if (replayed) {
    if (!replayed.answers) throw new ReplayDivergedError('the recorded ask has no answers');
    return replayed.answers;
  }
  recordEntry(session.journal, { op: 'ask', ask: askInput });
  session.run.onTimeline?.({ kind: 'ask', at: new Date().toISOString(), message: askInput.message });
  const { vars, conv } = readVariables(payload.vars, payload.conv);
  session.end(asked({ vars, conv, askInput, journal: snapshotJournal(session.journal) }));
  return null;
}

function readFetchRequest(payload: Record<string, unknown>): FetchRequest {
  const { url, method, headers, body } = payload;
  if (typeof url !== 'string' || !URL.canParse(url)) throw new AgentTypeError(`sys.fetch: invalid URL ${JSON.stringify(url)}`);
  if (typeof method !== 'string' || !/^[A-Za-z]+$/.test(method)) throw new AgentTypeError('sys.fetch: method must be a word like GET');
  if (body !== null && typeof body !== 'string') throw new AgentTypeError('sys.fetch: body must be a string');
  return { url: new URL(url).href, method: method.toUpperCase(), headers: readHeaders(headers), body };
}

function readHeaders(headers: unknown): Record<string, string> {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    throw new AgentTypeError('sys.fetch: headers must be an object of name → value');
  }
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string' && typeof value !== 'number') throw new AgentTypeError(`sys.fetch: header ${name} must be a string`);
    const text = String(value);
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || /[\r\n\0]/.test(text)) {
      throw new AgentTypeError(`sys.fetch: invalid header ${JSON.stringify(name)}`);
    }
    result[name] = text;
  }
  return result;
}

/**
 * The fetch's own timeout. When the run's deadline comes first the fetch gets no timer of its own,
 * so a slow fetch ends the run timedOut rather than callFailed.
 */
function readTimeout(requested: unknown): number {
  if (requested === null) return defaultFetchTimeoutMs;
  if (typeof requested !== 'number' || !(requested > 0) || !Number.isFinite(requested)) {
    throw new AgentTypeError('sys.fetch: timeoutMs must be a positive number');
  }
  return requested;
}

/** Resolves after `ms`; never resolves once the run has ended (its timers are cleared, the isolate is gone). */
function delay(ms: number, session: Session): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      session.timers.delete(timer);
      resolve();
    }, Math.min(ms, maxTimerMs));
    session.timers.add(timer);
  });
}
