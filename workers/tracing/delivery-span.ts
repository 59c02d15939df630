import { context, propagation, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { tracingEnabled } from '../../shared/tracing-enabled.js';
import { markFailed } from '../../runs/child-span.js';
import { startClientSpan } from './client-span.js';

/**
 * Runs a webhook delivery attempt in an HTTP client span (DESIGN §18), a child of the run's span
 * (`traceparent` of the job; a delivery queued again by the sweep has none and starts a trace of its
 * own); the request carries the span's `traceparent`. Without tracing, just runs it.
 */
export async function inDeliverySpan<T>(traceparent: string | undefined, url: string, attempt: () => Promise<T>): Promise<T> {
  if (!tracingEnabled) return attempt();
  const parent = traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
  const span = startClientSpan(parent, 'POST', { method: 'POST', url }, { 'agentexec.request.kind': 'webhook' });
  try {
    return await context.with(trace.setSpan(parent, span), attempt);
  } catch (err) {
    markFailed(span, err);
    throw err;
  } finally {
    span.end();
  }
}
