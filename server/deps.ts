import type { Queue } from 'bullmq';
import type { RedisClient } from '../runs/redis-connection.js';
import type { Config } from '../shared/config.js';
import type { Clock } from '../shared/clock.js';
import type { RunQueues } from '../runs/run-queues.js';
import type { MailJobData } from '../shared/mail-jobs.js';
import type { WebhookJobData } from '../shared/webhook-jobs.js';
import type { Logger } from '../shared/logger.js';
import type { SecretBox } from '../shared/secret-box.js';
import type { Db } from '../db/database.js';
import type { Secrets } from '../db/resolve-secrets.js';
import type { InlineRuns } from '../runs/inline-runs.js';
import type { ScheduleQueue } from '../runs/schedulers.js';
import type { BearerKeys } from './auth/bearer-keys.js';
import type { CallerLimitsCache } from '../runs/caller-limits-cache.js';
import type { InFlightView } from '../runs/in-flight-view.js';
import type { PublishedAgents } from './exec/published-agents.js';
import type { RunEvents } from '../runs/run-events.js';
import type { WebMetrics } from './ops/metrics.js';
import type { UsageRecorder } from './usage/usage-recorder.js';

/** What the web process's routes and services depend on; built once in web.ts. */
export interface WebDeps {
  config: Config;
  db: Db;
  redis: RedisClient;
  /** The run queue of each shard (DESIGN §17). */
  runQueues: RunQueues;
  mailQueue: Queue<MailJobData>;
  /** The webhook delivery queue, for an admin's "deliver again". */
  webhookQueue: Queue<WebhookJobData>;
  /** Only for the queue dashboard: the web process adds no maintenance job. */
  maintenanceQueue: Queue;
  /** The schedules' job schedulers (DESIGN §19), set and removed by the admin endpoints; the workers take the firings. */
  scheduleQueue: ScheduleQueue;
  runEvents: RunEvents;
  /** Service accounts by key id, cached while account changes are heard (server/auth/bearer-keys.ts). */
  bearerKeys: BearerKeys;
  /** Each caller's limits (DESIGN §16), read from PostgreSQL at most every few seconds. */
  callerLimits: CallerLimitsCache;
  /** Each caller's runs in flight as last heard from Redis (run-admission.ts admitShortRun). */
  inFlight: InFlightView;
  /** The agents known to be published (a streamed call to an unknown one is refused before its stream). */
  publishedAgents: PublishedAgents;
  logger: Logger;
  box: SecretBox;
  secrets: Secrets;
  clock: Clock;
  metrics: WebMetrics;
  usage: UsageRecorder;
  /** Short runs answered here rather than queued (workers/inline-runs.ts), when the process was given them. */
  inlineRuns?: InlineRuns;
}

