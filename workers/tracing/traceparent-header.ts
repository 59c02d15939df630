import { activeTraceparent } from '../../runs/child-span.js';

/**
 * `headers` with the active span's `traceparent` (DESIGN §18: sys.fetch and webhook requests carry it),
 * replacing one the agent set; `headers` as they are without tracing.
 */
export function withTraceparent(headers: Record<string, string>): Record<string, string> {
  const traceparent = activeTraceparent();
  if (!traceparent) return headers;
  const kept = Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'traceparent'));
  return { ...kept, traceparent };
}
