import { createRequire } from 'node:module';
import { basename } from 'node:path';
import { createSpanIdGenerator } from './span-ids.js';

// Types only: the packages are required in startSdk, so a process without tracing never loads them.
type Exporter = typeof import('@opentelemetry/exporter-trace-otlp-http');
type Instrumentation = typeof import('@opentelemetry/instrumentation');
type IORedis = typeof import('@opentelemetry/instrumentation-ioredis');
type Pg = typeof import('@opentelemetry/instrumentation-pg');
type Resources = typeof import('@opentelemetry/resources');
type TraceBase = typeof import('@opentelemetry/sdk-trace-base');
type TraceNode = typeof import('@opentelemetry/sdk-trace-node');
/**
 * The OpenTelemetry SDK of a process (DESIGN §18), started by tracing/start.ts only when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set. Spans go out in batches over OTLP/HTTP (JSON) to that endpoint
 * (`/v1/traces` appended); the standard OTEL_* variables (OTEL_SERVICE_NAME, OTEL_BSP_SCHEDULE_DELAY,
 * OTEL_EXPORTER_OTLP_HEADERS, OTEL_TRACES_SAMPLER…) apply. Answers the function that flushes.
 *
 * What is instrumented, and what is kept out of attributes:
 * - incoming HTTP: one server span per API call, made by the web process's middleware
 *   (server/middleware/request-span.ts) rather than the HTTP and Koa instrumentations, which cost far
 *   more for what they add;
 * - PostgreSQL and Redis calls made within a traced call or run (not the queue's own polling): the SQL
 *   text (kysely sends values as parameters, which are never recorded) and the Redis command name only;
 *   no span for taking a connection from the pool (one per query, saying nothing the query's does not);
 * - outgoing HTTP is not instrumented here: sys.fetch and webhook requests make spans of their own
 *   that name the destination's host and never its path or query (workers/tracing/).
 */
export function startSdk(): () => Promise<void> {
  const require = createRequire(import.meta.url);
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as Exporter;
  const { registerInstrumentations } = require('@opentelemetry/instrumentation') as Instrumentation;
  const { IORedisInstrumentation } = require('@opentelemetry/instrumentation-ioredis') as IORedis;
  const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg') as Pg;
  const { defaultResource, resourceFromAttributes } = require('@opentelemetry/resources') as Resources;
  const { BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base') as TraceBase;
  const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node') as TraceNode;
  const provider = new NodeTracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({
        'service.name': process.env.OTEL_SERVICE_NAME ?? 'agentexec',
        'agentexec.process': basename(process.argv[1] ?? 'node', '.js'),
      }),
    ),
    idGenerator: createSpanIdGenerator(),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register();
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false, ignoreConnectSpans: true }),
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
    ],
  });
  preloadInstrumented(require);
  return () => provider.forceFlush();
}

/**
 * The instrumentations patch a package as it is required. Modules of this ESM program import them
 * instead, which require-in-the-middle does not see (pg is seen, through the files it requires
 * itself); requiring them here patches the very objects those imports get.
 */
function preloadInstrumented(require: NodeJS.Require): void {
  for (const name of ['ioredis', 'pg']) require(name);
}
