import { context, trace } from '@opentelemetry/api';
import { pino, type Logger } from 'pino';
import { tracingEnabled } from './tracing-enabled.js';

export type { Logger };

/**
 * Header and field names whose values are secrets; pino replaces them before a line is written.
 * Code never logs request bodies; this list is the second line of defence.
 */
const redactPaths = [
  'password',
  '*.password',
  'key',
  '*.key',
  'secret',
  '*.secret',
  'token',
  '*.token',
  'authorization',
  '*.authorization',
  'cookie',
  '*.cookie',
  'headers.authorization',
  'headers.cookie',
  'answers',
  '*.answers',
];

/** A JSON logger; `destination` lets tests capture lines. With tracing on, each line made within a span carries its `trace_id` and `span_id`. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const mixin = tracingEnabled ? activeSpanIds : undefined;
  return pino({ level, redact: { paths: redactPaths, censor: '[redacted]' }, base: { pid: process.pid }, mixin }, destination);
}

function activeSpanIds(): { trace_id?: string; span_id?: string } {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}
