/**
 * Whether this process exports traces (DESIGN §18): OTEL_EXPORTER_OTLP_ENDPOINT is set, and
 * tracing/start.ts loaded the SDK. Code that would only do work for tracing (run spans, log line
 * trace ids) checks it, so a process without tracing does none of it.
 */
export const tracingEnabled = Boolean(process.env.OTEL_EXPORTER_OTLP_ENDPOINT);
