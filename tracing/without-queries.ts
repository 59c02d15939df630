import type { Span } from '@opentelemetry/api';

/** Attributes of an HTTP server span that may hold the request's query string (old and stable conventions). */
const urlAttributes = ['http.target', 'http.url', 'url.full'] as const;

/**
 * Drops the query string from a server span's URL attributes: a query may carry a token or a value a
 * caller typed (DESIGN §18: no secret or input in any attribute).
 */
export function withoutQueries(span: Span): void {
  const attributes = (span as unknown as { attributes?: Record<string, unknown> }).attributes ?? {};
  for (const name of urlAttributes) {
    const value = attributes[name];
    if (typeof value === 'string' && value.includes('?')) span.setAttribute(name, value.slice(0, value.indexOf('?')));
  }
  if (attributes['url.query'] !== undefined) span.setAttribute('url.query', '');
}
