import { context, propagation, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import { tracingEnabled } from '../shared/tracing-enabled.js';

/** The tracer of agentexec's own spans (DESIGN §18); a no-op until tracing/sdk.ts registers a provider. */
export const tracer = trace.getTracer('agentexec');

/**
 * Runs `fn` in a span of its own, a child of the active one (the run's, the call's), so the
 * PostgreSQL and Redis calls it makes are that span's children. Without tracing, just runs `fn`. A
 * failure marks the span as an error by the error's class only: its message may quote input.
 */
export async function inChildSpan<T>(name: string, fn: () => Promise<T>, attributes?: Attributes): Promise<T> {
  if (!tracingEnabled || !trace.getSpan(context.active())) return fn();
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn();
    } catch (err) {
      markFailed(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** The trace id of the active span (a run's trace, while it runs), or null without tracing. */
export function activeTraceId(): string | null {
  if (!tracingEnabled) return null;
  const span = trace.getSpan(context.active());
  return span ? span.spanContext().traceId : null;
}

/** Marks a span failed, naming the error's class and never its message (which may carry input or a URL). */
export function markFailed(span: { setStatus: (s: { code: SpanStatusCode }) => void; setAttribute: (k: string, v: string) => void }, err: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute('error.type', err instanceof Error ? err.name : typeof err);
}

/** The active span's W3C trace context (`traceparent`), for a job or a request to carry; undefined without tracing or outside a span. */
export function activeTraceparent(): string | undefined {
  if (!tracingEnabled || !trace.getSpan(context.active())) return undefined;
  const carrier: { traceparent?: string } = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}
