// First: with OTEL_EXPORTER_OTLP_ENDPOINT set, the SDK must patch pg, ioredis, koa and http before they are used.
import { flushTracing } from '../tracing/start.js';
import { loadConfig } from '../shared/config.js';
import { checkRedisMode } from '../runs/redis-connection.js';
import { createLogger } from '../shared/logger.js';
import { openRuntime } from '../db/runtime.js';
import { startWorkers } from './start-workers.js';
import { exitProcess } from './sandbox/process-exit.js';

/** Entry point of a worker process (Procfile `worker`). */
const config = loadConfig();
await checkRedisMode(config);
const logger = createLogger(config.logLevel);
// Runs hold no connection while the agent runs (DESIGN §11): a few serve every run's reads and commits.
const runtime = await openRuntime(config, logger, config.databasePoolSize);
const worker = await startWorkers(runtime);
logger.info({ concurrency: config.workerConcurrency }, 'worker running');

// A stop takes no new job and lets the running ones end (each within MAX_AGENT_RUNTIME_MS).
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    logger.info('worker stopping');
    void worker
      .close()
      .then(() => runtime.db.destroy())
      .then(() => flushTracing())
      .then(() => logger.info('worker stopped'))
      .finally(() => exitProcess(0));
  });
}
