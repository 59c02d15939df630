import { context, SpanKind, trace, type Context, type Span } from '@opentelemetry/api';
import { tracingEnabled } from '../../shared/tracing-enabled.js';
import { markFailed, tracer } from '../../runs/child-span.js';
import { isReplaying } from '../sandbox/journal.js';
import type { FetchResult } from '../outbound-http/http-fetch.js';
import type { Session } from '../sandbox/session.js';
import type { StreamHead } from '../sandbox/streamed-fetch.js';
import { chatAttributes, chatCallOf, chatSpanName, usageOfResponse, usageOfStream, type ChatCall } from './chat-usage.js';
import { startClientSpan } from './client-span.js';

/**
 * The run's trace context, for the spans of its sys calls (DESIGN §18). Taken as the sandbox starts:
 * the isolate's calls into the host come without the async context the run was started in.
 * Undefined without tracing.
 */
export function runTraceContext(): Context | undefined {
  if (!tracingEnabled) return undefined;
  const active = context.active();
  return trace.getSpan(active) ? active : undefined;
}

type Payload = Record<string, unknown>;

/**
 * Runs the host side of an async sys call in a span of the run's trace: a sys.fetch as an HTTP client
 * span (`chat {model}` for an OpenAI-compatible chat completion), a sys.ask as `ask`. Other calls, a
 * call replayed from the journal (nothing is sent) and runs without a trace just run.
 */
export function inSysCallSpan(session: Session, op: string, payload: Payload, call: () => Promise<unknown>): Promise<unknown> {
  const parent = session.traceContext;
  if (!parent || isReplaying(session.journal)) return call();
  if (op === 'fetch') return inFetchSpan(session, parent, payload, call);
  if (op === 'ask') return inSpan(tracer.startSpan('ask', { kind: SpanKind.INTERNAL }, parent), parent, call, () => undefined);
  return call();
}

function inFetchSpan(session: Session, parent: Context, payload: Payload, call: () => Promise<unknown>): Promise<unknown> {
  const request = requestOf(payload);
  if (!request) return call();
  const chat = chatCallOf(request);
  const span = startClientSpan(parent, chat ? chatSpanName(chat) : request.method, request, chat ? chatAttributes(chat) : {});
  return inSpan(span, parent, call, (result) => {
    if (typeof result !== 'object' || result === null || !('status' in result)) return undefined;
    span.setAttribute('http.response.status_code', (result as { status: number }).status);
    if ('stream' in result) return endWithStream(session, span, (result as StreamHead).stream, chat);
    if (chat) span.setAttributes(usageOfResponse((result as FetchResult).text));
    return undefined;
  });
}

/**
 * Runs `call` within `span` and ends it when the call settles, unless `onResult` answers that
 * something else ends it (a streamed body's end).
 */
async function inSpan(span: Span, parent: Context, call: () => Promise<unknown>, onResult: (result: unknown) => 'later' | undefined): Promise<unknown> {
  let later: 'later' | undefined;
  try {
    const result = await context.with(trace.setSpan(parent, span), call);
    later = onResult(result);
    return result;
  } catch (err) {
    markFailed(span, err);
    throw err;
  } finally {
    if (later !== 'later') span.end();
  }
}

/**
 * A streamed response's span lasts until its body ends, fails or is closed (its connection is given
 * back), or at the latest until the run's deadline; a chat completion's usage is read from the
 * body's last event then.
 */
function endWithStream(session: Session, span: Span, stream: number, chat: ChatCall | null): 'later' | undefined {
  const open = session.fetchStreams.open.get(stream);
  const live = open?.live;
  if (!open || !live) return undefined;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    if (chat) span.setAttributes(usageOfStream(open.entry.stream.chunks));
    span.end();
  };
  const timer = setTimeout(end, Math.max(0, session.deadline - Date.now()));
  timer.unref();
  const release = live.release;
  live.release = () => {
    end();
    release();
  };
  return 'later';
}

function requestOf(payload: Payload): { method: string; url: string; body: string | null } | null {
  const { url, method, body } = payload;
  if (typeof url !== 'string' || !URL.canParse(url) || typeof method !== 'string') return null;
  return { url, method: method.toUpperCase(), body: typeof body === 'string' ? body : null };
}
