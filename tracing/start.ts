import { startSdk } from './sdk.js';

/**
 * Tracing of this process (DESIGN §18). Imported first by each process's entry point (cli/web.ts,
 * cli/start.ts, workers/main.ts): with OTEL_EXPORTER_OTLP_ENDPOINT set, it starts the OpenTelemetry
 * SDK (tracing/sdk.ts) before the modules it instruments are evaluated; without it, nothing of the SDK
 * is loaded and @opentelemetry/api stays a no-op. Synchronous on purpose: a top-level await here
 * would let the entry's later imports (pg among them) run before the SDK could patch them.
 */
const flush = process.env.OTEL_EXPORTER_OTLP_ENDPOINT ? startSdk() : () => Promise.resolve();

/** Sends the spans still held (at a stop); resolves at once when tracing is off. */
export function flushTracing(): Promise<void> {
  return flush().catch(() => undefined);
}
