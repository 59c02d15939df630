// First: with OTEL_EXPORTER_OTLP_ENDPOINT set, the SDK must patch pg, ioredis, koa and http before they are used.
import { flushTracing } from '../tracing/start.js';
import { loadConfig } from '../shared/config.js';
import { checkRedisMode } from '../runs/redis-connection.js';
import { createLogger } from '../shared/logger.js';
import { openRuntime } from '../db/runtime.js';
import { startWeb } from '../server/web.js';
import { startInlineRuns } from '../workers/inline-runs.js';
import { exitProcess } from '../workers/sandbox/process-exit.js';

/** Entry point of a web process (Procfile `web`): the API, answering short runs itself (workers/inline-runs.ts). */
const config = loadConfig();
await checkRedisMode(config);
const logger = createLogger(config.logLevel);
const runtime = await openRuntime(config, logger, config.databasePoolSize);
const web = await startWeb(runtime, config.port, { inlineRuns: await startInlineRuns(runtime) });
logger.info({ port: web.port }, 'web listening');

// A stop refuses new connections and lets open calls and streams end.
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    logger.info('web stopping');
    void web
      .close()
      .then(() => runtime.db.destroy())
      .then(() => flushTracing())
      .then(() => logger.info('web stopped'))
      .finally(() => exitProcess(0));
  });
}
