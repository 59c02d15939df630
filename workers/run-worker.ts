import { Queue, Worker } from 'bullmq';
import { shardsOf } from '../shared/shards.js';
import { webhookQueueName, type WebhookJobData } from '../shared/webhook-jobs.js';
import { controlChannel, runQueueName } from '../shared/channels.js';
import type { Config } from '../shared/config.js';
import type { Clock } from '../shared/clock.js';
import type { ControlMessage } from '../shared/events.js';
import type { RunJobData } from '../shared/jobs.js';
import type { Logger } from '../shared/logger.js';
import type { SecretBox } from '../shared/secret-box.js';
import type { Db } from '../db/database.js';
import { createFirstRunWriter } from '../runs/first-run-writer.js';
import { createConversationCommits } from '../runs/conversation-commits.js';
import { createConversationReader } from '../runs/conversation-reader.js';
import { createConversationTurns } from '../runs/turns.js';
import { createAgentCodeCache } from './runs/agent-code-cache.js';
import { createAgentSecretsCache } from './runs/agent-secrets-cache.js';
import { createContextPool } from './sandbox/context-pool.js';
import { setAgentThreadNice } from './sandbox/isolate-threads.js';
import { createSessionWatch } from './runs/session-watch.js';
import { createStartGate, startGateWidth } from './runs/start-gate.js';
import { applyMemoryBackpressure } from './memory-backpressure.js';
import { createRunControl } from './runs/run-control.js';
import type { HeldConversation } from './runs/held-conversation.js';
import { createRunAgentProcessor, reportFailedRun, type ProcessorDeps } from './run-agent.processor.js';
import { subscribeToControl } from './control-channel.js';
import { applyFetchWindow, fetchAheadOf, fetchChains, type FetchWindow } from './fetch-window.js';
import { createRunMetricsRecorder } from '../runs/run-metrics.js';
import { openRedis } from '../runs/redis-connection.js';
import { newWorkerId, startWorkerStatus } from '../runs/worker-status.js';
import { hostname } from 'node:os';
import { createCallerLimitsCache } from '../runs/caller-limits-cache.js';
import { createInFlightView } from '../runs/in-flight-view.js';
import { openRunQueues } from '../runs/run-queues.js';
import { openChildEnds } from './runs/child-ends.js';
import { createChildRuns, type ChildRunsDeps } from './runs/child-runs.js';
import { createInlineAdmission, defaultAdmission } from './runs/inline-admission.js';
import { runShort, type ShortRunDeps } from './runs/short-run.js';

export interface WorkerDeps {
  config: Config;
  db: Db;
  logger: Logger;
  box: SecretBox;
  clock: Clock;
}

export interface RunWorker {
  /** Stops taking jobs, lets active runs finish, closes its connections. */
  close(): Promise<void>;
}

/** Starts a BullMQ worker that runs agents, WORKER_CONCURRENCY at a time, and listens for cancels. */
export async function startRunWorker(deps: WorkerDeps): Promise<RunWorker> {
  const { config, logger } = deps;
  const prefix = config.queuePrefix;
  const publisher = openRedis(config, { maxRetriesPerRequest: 1, enableAutoPipelining: true });
  publisher.on('error', (err) => logger.warn({ err: String(err) }, 'worker redis connection error'));
  const announce = (message: ControlMessage) => publisher.publish(controlChannel(prefix), JSON.stringify(message));
  const control = createRunControl();
  const turns = createConversationTurns<HeldConversation>(publisher, shardsOf(config).prefixOf, (convid) => announce({ type: 'turn', convid }));
  setAgentThreadNice(config.agentThreadNice);
  const isolates = createContextPool({
    maxIdle: config.sandboxWarmContexts,
    runsPerIsolate: config.sandboxRunsPerIsolate,
    runsPerContext: Math.ceil(config.sandboxRunsPerIsolate / 2),
  });
  const sessions = createSessionWatch(deps);
  const secrets = createAgentSecretsCache(deps.box);
  // Not on the publisher: BullMQ defines its scripts on the connection it is given, and ioredis copies
  // every defined script into each auto-pipelined batch (one per turn of the event loop with events).
  const queueConnection = openRedis(config, { maxRetriesPerRequest: 1 });
  queueConnection.on('error', (err) => logger.warn({ err: String(err) }, 'worker redis connection error'));
  const webhooks = new Queue<WebhookJobData>(webhookQueueName, { connection: queueConnection, prefix });
  webhooks.on('error', (err) => logger.warn({ err: String(err) }, 'webhook queue error'));
  const runMetrics = createRunMetricsRecorder(publisher, prefix);
  const agents = createAgentCodeCache();
  // sys.call's children (DESIGN §19): queued as the web process queues a run, their ends heard on this worker's inbox.
  const runQueues = openRunQueues(shardsOf(config), queueConnection, (err) => logger.warn({ err: String(err) }, 'run queue error'));
  const childEnds = await openChildEnds({ config, db: deps.db, logger, reader: publisher });
  let windows: FetchWindow[] = [];
  const lendPlace = () => windows[0]?.lend() ?? (() => undefined);
  const processorDeps: ProcessorDeps = { ...deps, publisher, control, turns, isolates, sessions, secrets, webhooks, runMetrics, startGate: createStartGate(startGateWidth), agents, conversations: createConversationReader(deps.db), firstRuns: createFirstRunWriter(deps.db), commits: createConversationCommits(deps.db) };

  // A short child runs here, in its parent's worker, while the worker has room (DESIGN §19): no job, fetch or event between.
  let hasRoom = () => false;
  // Their commit does not wait for the WAL's flush: the parent's own commit, after it, flushes it (FirstRun.flushLater).
  const childrenHere: ShortRunDeps = { runDeps: { ...processorDeps, firstRuns: createFirstRunWriter(deps.db, { flushLater: true }) }, admission: createInlineAdmission(deps.clock, defaultAdmission), logger, runMetrics };
  const runHere: ChildRunsDeps['runHere'] = async (data, inputs, mayCommit) => (hasRoom() ? runShort(childrenHere, data, inputs, { late: false, mayCommit }) : 'queue');
  processorDeps.childRuns = createChildRuns({ ...deps, redis: publisher, runQueues, agents, callerLimits: createCallerLimitsCache(deps.db, config), inFlight: createInFlightView(), ends: childEnds, lendPlace, runHere });

  const subscriber = await subscribeToControl(config, prefix, logger, (message) => {
    if (message.type === 'cancel') control.cancel(message.runId);
    else if (message.type === 'secrets') secrets.drop(message.agentName);
    else if (message.type === 'turn') turns.wake(message.convid);
  });

  const connection = openRedis(config, { maxRetriesPerRequest: null });
  const processor = createRunAgentProcessor(processorDeps);
  // BullMQ workers on each shard's queue (DESIGN §17), sharing the fetch window and the start gate: the
  // runs held and started are the process's, in their fair order whatever shard they came from. Each
  // queue has `fetchChains` of them: a BullMQ worker takes its jobs one round trip after another.
  let runsInFlight = 0;
  const chains = fetchChains(config.workerConcurrency, shardsOf(config).prefixes.length);
  const fetchers = shardsOf(config).prefixes.flatMap((shardPrefix) => Array.from({ length: chains }, (_, chain) => ({ shardPrefix, chain })));
  const workers = fetchers.map(
    ({ shardPrefix, chain }, fetcher) =>
      new Worker<RunJobData>(
        runQueueName,
        // Two parameters: BullMQ makes an AbortController for each job only for a processor that takes a third.
        async (job) => {
          const place = windows[fetcher]?.started();
          if (place) await place;
          runsInFlight += 1;
          try {
            return await processor(job);
          } finally {
            runsInFlight -= 1;
            windows[fetcher]?.ended();
          }
        },
        {
          connection,
          prefix: shardPrefix,
          // WORKER_CONCURRENCY runs held at most, taken from the queue only as they can start (fetch-window.ts).
          concurrency: Math.min(config.workerConcurrency, fetchAheadOf(chains)),
          lockDuration: config.jobLockMs,
          stalledInterval: config.jobLockMs,
          // A run is never started twice: a job whose worker died ends `unexpected` instead.
          maxStalledCount: 0,
          // The check covers the whole queue: one of the process's workers on it makes it.
          skipStalledCheck: chain > 0,
          // An idle chain waits this long (s) for a job before asking again (a BZPOPMIN, then a moveToActive
          // script): a queued job wakes a waiting chain at once, so the wait only sets the idle polling, up to
          // 8 chains a shard. 10 s is the longest BullMQ blocks on Redis for a delayed job (5 by default here).
          drainDelay: 10,
        },
      ),
  );
  windows = applyFetchWindow(workers, config.workerConcurrency, fetchAheadOf(chains));
  for (const worker of workers) {
    worker.on('failed', (job, err) => {
      if (job) void reportFailedRun(processorDeps, job.data, err.message);
    });
    worker.on('error', (err) => logger.error({ err }, 'worker error'));
  }
  await Promise.all(workers.map((worker) => worker.waitUntilReady()));
  const backpressure = applyMemoryBackpressure(workers, config.workerMemoryMb, logger);
  hasRoom = () => runsInFlight < config.workerConcurrency && !backpressure.overBudget();
  const id = newWorkerId();
  const startedAt = new Date().toISOString();
  let closing = false;
  const status = startWorkerStatus(publisher, prefix, () => ({
    id,
    host: hostname(),
    pid: process.pid,
    startedAt,
    seenAt: new Date().toISOString(),
    runsInFlight,
    concurrency: config.workerConcurrency,
    rssMb: Math.round(process.memoryUsage.rss() / 1048576),
    memoryBudgetMb: config.workerMemoryMb,
    takingRuns: !closing && !backpressure.overBudget(),
  }));
  return {
    async close() {
      // Shown as taking no run while its runs finish, then gone.
      closing = true;
      backpressure.stop();
      await Promise.all(workers.map((worker) => worker.close()));
      await status.stop();
      sessions.close();
      isolates.clear();
      connection.disconnect();
      subscriber.disconnect();
      await webhooks.close();
      await childEnds.close();
      await runQueues.close();
      queueConnection.disconnect();
      await runMetrics.close();
      publisher.disconnect();
    },
  };
}
