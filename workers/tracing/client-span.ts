import { SpanKind, type Attributes, type Context, type Span } from '@opentelemetry/api';
import { tracer } from '../../runs/child-span.js';

/**
 * Starts the span of an outgoing HTTP request (a sys.fetch, a webhook delivery), a child of `parent`.
 * It names the method and the destination's host and port only: a path or query may carry a secret
 * (a bot token in the path) or a caller's input (DESIGN §18). The request, sent within this span's
 * context, carries its `traceparent` (workers/outbound-http/http-fetch.ts).
 */
export function startClientSpan(parent: Context, name: string, request: { method: string; url: string }, attributes: Attributes = {}): Span {
  const url = new URL(request.url);
  return tracer.startSpan(
    name,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': request.method,
        'server.address': url.hostname,
        'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
        'url.scheme': url.protocol.slice(0, -1),
        ...attributes,
      },
    },
    parent,
  );
}
