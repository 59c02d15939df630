import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { Queue } from 'bullmq';
import { maintenanceQueueName, runQueueName, webInboxChannel } from '../shared/channels.js';
import { shardsOf } from '../shared/shards.js';
import { openRunQueues, type RunQueues } from '../runs/run-queues.js';
import { openScheduleQueue } from '../runs/schedulers.js';
import type { Config } from '../shared/config.js';
import type { Clock } from '../shared/clock.js';
import type { RunJobData } from '../shared/jobs.js';
import { mailQueueName, type MailJobData } from '../shared/mail-jobs.js';
import { webhookQueueName, type WebhookJobData } from '../shared/webhook-jobs.js';
import type { Logger } from '../shared/logger.js';
import type { SecretBox } from '../shared/secret-box.js';
import type { Db } from '../db/database.js';
import type { Secrets } from '../db/resolve-secrets.js';
import { createApp } from './app.js';
import { openBearerKeys } from './auth/bearer-keys.js';
import type { BearerKeyCache } from './auth/bearer-key-cache.js';
import type { InlineRuns } from '../runs/inline-runs.js';
import type { WebDeps } from './deps.js';
import { createCallerLimitsCache } from '../runs/caller-limits-cache.js';
import { createPublishedAgents } from './exec/published-agents.js';
import { createInFlightView } from '../runs/in-flight-view.js';
import { openRunEvents } from '../runs/run-events.js';
import { createWebMetrics } from './ops/metrics.js';
import { createUsageRecorder } from './usage/usage-recorder.js';
import { openRedis, waitForReady, type RedisClient, type RedisTarget } from '../runs/redis-connection.js';

export interface WebServer {
  server: Server;
  port: number;
  /** Stops accepting connections, lets open calls and streams finish, then closes its connections. */
  close(): Promise<void>;
}

/** How long an idle keep-alive connection is kept open. */
const keepAliveTimeoutMs = 65_000;

/** Starts the HTTP API on `port` (0 picks a free one). */
export async function startWeb(
  base: { config: Config; db: Db; logger: Logger; box: SecretBox; clock: Clock; secrets: Secrets },
  port = base.config.port,
  { inlineRuns, bearerKeyCache }: { inlineRuns?: InlineRuns; bearerKeyCache?: BearerKeyCache } = {},
): Promise<WebServer> {
  const { config, logger } = base;
  const redis = await openProducer(config, logger);
  // The queues have a connection of their own: BullMQ defines its sixty-odd scripts on the connection it
  // is given, and ioredis copies every defined script into each auto-pipelined batch it makes.
  const queueConnection = await openProducer(config, logger);
  const shards = shardsOf(config);
  const runQueues = openRunQueues(shards, queueConnection, (err) => logger.warn({ err: String(err) }, 'queue error'));
  const mailQueue = new Queue<MailJobData>(mailQueueName, { connection: queueConnection, prefix: config.queuePrefix });
  mailQueue.on('error', (err) => logger.warn({ err: String(err) }, 'mail queue error'));
  // Only for an admin's "deliver again" (server/admin/webhook-log.routes.ts); workers queue every other delivery.
  const webhookQueue = new Queue<WebhookJobData>(webhookQueueName, { connection: queueConnection, prefix: config.queuePrefix });
  webhookQueue.on('error', (err) => logger.warn({ err: String(err) }, 'webhook queue error'));
  const maintenanceQueue = new Queue(maintenanceQueueName, { connection: queueConnection, prefix: config.queuePrefix });
  maintenanceQueue.on('error', (err) => logger.warn({ err: String(err) }, 'maintenance queue error'));
  const scheduleQueue = openScheduleQueue(queueConnection, config.queuePrefix, (err) => logger.warn({ err: String(err) }, 'schedule queue error'));
  const inboxChannel = webInboxChannel(config.queuePrefix, randomUUID());
  const runEvents = await openRunEvents(config, redis, shards.prefixOf, inboxChannel, logger);
  const bearerKeys = await openBearerKeys({ redisUrl: config.redisUrl, redisCluster: config.redisCluster, prefix: config.queuePrefix, db: base.db, logger, cache: bearerKeyCache });
  const usage = createUsageRecorder(base.db, logger);
  const metrics = createWebMetrics({ redis, prefix: config.queuePrefix, queues: { ...runQueueSeries(runQueues), [mailQueueName]: mailQueue } });
  const callerLimits = createCallerLimitsCache(base.db, config);
  const deps: WebDeps = { ...base, redis, runQueues, mailQueue, webhookQueue, maintenanceQueue, scheduleQueue, runEvents, bearerKeys, callerLimits, inFlight: createInFlightView(), publishedAgents: createPublishedAgents(base.db), metrics, usage, inlineRuns };
  const server = createApp(deps).listen(port);
  // Node closes an idle keep-alive connection after 5 s, which races a client sending on it (ECONNRESET
  // on a POST it cannot safely repeat). Idle connections stay open longer than load balancers keep
  // theirs (60 s is common), so the balancer or client closes first; headers must come within that too.
  server.keepAliveTimeout = keepAliveTimeoutMs;
  server.headersTimeout = keepAliveTimeoutMs + 1000;
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const address = server.address();
  return {
    server,
    port: typeof address === 'object' && address ? address.port : port,
    async close() {
      await drain(server);
      // After the drain, so the calls still open are recorded; before the caller destroys the db.
      await usage.close();
      await inlineRuns?.close();
      await runEvents.close();
      await bearerKeys.close();
      await runQueues.close();
      await mailQueue.close();
      await webhookQueue.close();
      await maintenanceQueue.close();
      await scheduleQueue.close();
      queueConnection.disconnect();
      redis.disconnect();
    },
  };
}

/**
 * Stops listening and waits for every open request (streams included) to end. A kept-alive connection
 * that goes idle after its last response is closed, so none holds the shutdown up.
 */
function drain(server: Server): Promise<void> {
  return new Promise((resolve) => {
    const closeIdle = setInterval(() => server.closeIdleConnections(), 50);
    server.close(() => {
      clearInterval(closeIdle);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/**
 * A producer connection: fails fast when Redis is down (a 503), never queues commands offline. Commands
 * of concurrent calls issued in the same tick go out in one write (auto-pipelining).
 */
async function openProducer(target: RedisTarget, logger: Logger): Promise<RedisClient> {
  const redis = openRedis(target, { enableOfflineQueue: false, maxRetriesPerRequest: 1, enableAutoPipelining: true });
  redis.on('error', (err) => logger.warn({ err: String(err) }, 'redis connection error'));
  await waitForReady(redis);
  return redis;
}

/** The run queues as /metrics names them: `runs`, or with several shards `runs` then each shard's number (`runs.1`...). */
function runQueueSeries(runQueues: RunQueues): Record<string, RunQueues['all'][number]> {
  if (runQueues.all.length === 1) return { [runQueueName]: runQueues.all[0]! };
  return Object.fromEntries(runQueues.all.map((queue, shard) => [`${runQueueName}.${shard}`, queue]));
}
