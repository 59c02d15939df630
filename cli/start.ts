// First: with OTEL_EXPORTER_OTLP_ENDPOINT set, the SDK must patch pg, ioredis, koa and http before they are used.
import { flushTracing } from '../tracing/start.js';
import { loadConfig } from '../shared/config.js';
import { checkRedisMode } from '../runs/redis-connection.js';
import { createLogger } from '../shared/logger.js';
import { ensureDatabase, createDb, migrateToLatest } from '../db/database.js';
import { openRuntime } from '../db/runtime.js';
import { startWeb } from '../server/web.js';
import { startWorkers } from '../workers/start-workers.js';
import { startInlineRuns } from '../workers/inline-runs.js';
import { exitProcess } from '../workers/sandbox/process-exit.js';

/** `npm start`: one process for one machine — creates and migrates the database, then serves web + worker. */
const config = loadConfig();
await checkRedisMode(config);
const logger = createLogger(config.logLevel);
await ensureDatabase(config.databaseUrl);
const migrationDb = createDb(config.databaseUrl, 1);
const applied = await migrateToLatest(migrationDb);
await migrationDb.destroy();
if (applied.length) logger.info({ applied }, 'migrations applied');

const runtime = await openRuntime(config, logger, 2 * config.databasePoolSize);
const worker = await startWorkers(runtime);
const web = await startWeb(runtime, config.port, { inlineRuns: await startInlineRuns(runtime) });
logger.info({ port: web.port, concurrency: config.workerConcurrency }, 'agentexec listening');

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    logger.info('stopping');
    void web
      .close()
      .then(() => worker.close())
      .then(() => runtime.db.destroy())
      .then(() => flushTracing())
      .finally(() => exitProcess(0));
  });
}
