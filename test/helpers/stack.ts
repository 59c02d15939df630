import { Writable } from 'node:stream';
import type { Clock } from '../../shared/clock.js';
import { loadConfig, type Config } from '../../shared/config.js';
import { createLogger } from '../../shared/logger.js';
import { openRuntime, type Runtime } from '../../db/runtime.js';
import { createBearerKeyCache, type BearerKeyCache } from '../../server/auth/bearer-key-cache.js';
import { startWeb, type WebServer } from '../../server/web.js';
import { startWorkers, type Workers } from '../../workers/start-workers.js';
import { startInlineRuns } from '../../workers/inline-runs.js';
import { startTestSmtp, type TestSmtp } from './smtp.js';
import { testEnv } from './test-env.js';

export interface Stack {
  url: string;
  config: Config;
  runtime: Runtime;
  web: WebServer;
  worker: Workers;
  /** Every log line written so far (JSON), for tests that check what is logged. */
  logLines: string[];
  /** The web process's bearer key cache: its `generation` moves when an account change message has dropped keys. */
  bearerKeyCache: BearerKeyCache;
  close(): Promise<void>;
}

/** The test configuration, with overrides. */
export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({ ...testEnv, ...overrides });
}

/**
 * Starts web and worker in this process against this run's database and queue prefix (and `clock`,
 * when given; `inline` sets how the web process takes on short runs, workers/inline-runs.ts).
 */
export async function startStack(overrides: Record<string, string> = {}, options: { clock?: Clock; inline?: Parameters<typeof startInlineRuns>[1] } = {}): Promise<Stack> {
  const config = testConfig({ LOG_LEVEL: 'info', ...overrides });
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const logger = createLogger(config.logLevel, sink);
  const runtime = await openRuntime(config, logger, 2 * config.databasePoolSize);
  if (options.clock) runtime.clock = options.clock;
  const worker = await startWorkers(runtime);
  const bearerKeyCache = createBearerKeyCache();
  const web = await startWeb(runtime, 0, { inlineRuns: await startInlineRuns(runtime, options.inline), bearerKeyCache });
  return {
    url: `http://127.0.0.1:${web.port}`,
    config,
    runtime,
    web,
    worker,
    logLines,
    bearerKeyCache,
    async close() {
      await web.close();
      await worker.close();
      await runtime.db.destroy();
    },
  };
}

export interface MailStack extends Stack {
  /** The SMTP server the stack's mail goes to. */
  smtp: TestSmtp;
}

/** A stack whose mail goes to a real SMTP server started for it; `close` stops both. */
export async function startStackWithMail(overrides: Record<string, string> = {}, options: { clock?: Clock } = {}): Promise<MailStack> {
  const smtp = await startTestSmtp();
  const stack = await startStack({ SMTP_URL: smtp.url, ...overrides }, options);
  return {
    ...stack,
    smtp,
    async close() {
      await stack.close();
      await smtp.close();
    },
  };
}
