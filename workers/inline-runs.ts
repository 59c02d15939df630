import type { Clock } from '../shared/clock.js';
import { shardsOf } from '../shared/shards.js';
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';
import type { SecretBox } from '../shared/secret-box.js';
import type { Db } from '../db/database.js';
import { createConversationCommits } from '../runs/conversation-commits.js';
import { createConversationReader } from '../runs/conversation-reader.js';
import { createFirstRunWriter } from '../runs/first-run-writer.js';
import type { InlineRuns } from '../runs/inline-runs.js';
import { createRunMetricsRecorder } from '../runs/run-metrics.js';
import { createConversationTurns } from '../runs/turns.js';
import { createAgentCodeCache } from './runs/agent-code-cache.js';
import { createAgentSecretsCache } from './runs/agent-secrets-cache.js';
import type { HeldConversation } from './runs/held-conversation.js';
import { createInlineAdmission, defaultAdmission, type InlineAdmissionOptions } from './runs/inline-admission.js';
import { watchLoopLag } from './runs/loop-lag.js';
import { runShort, type ShortRunDeps } from './runs/short-run.js';
import type { RunDeps } from './runs/run-deps.js';
import { createContextPool } from './sandbox/context-pool.js';
import { setAgentThreadNice } from './sandbox/isolate-threads.js';
import { subscribeToControl } from './control-channel.js';
import { openRedis } from '../runs/redis-connection.js';
import { isIntakePaused, openRunQueues } from '../runs/run-queues.js';

export interface InlineRunsDeps {
  config: Config;
  db: Db;
  logger: Logger;
  box: SecretBox;
  clock: Clock;
}

/**
 * How late (ms, on average) the event loop may run for this process to take on runs freely: past it,
 * it leaves costly agents to the workers (inline-admission.ts), since the calls it serves (cancels,
 * streams, queued calls) would wait behind them.
 */
const defaultMaxLateMs = 5;

/** Idle contexts a web process keeps for its short runs: a few per caller and agent it serves often. */
const maxIdleContexts = 64;

/**
 * The web process's short runs (runs/inline-runs.ts): a new conversation's call whose agent is over
 * within one synchronous entry into its sandbox (no async sys call, at most 10 ms of computing) runs
 * here, with no queue, job or event between, and commits as a worker's first run does. One that turns
 * out not to be so short is stopped before it reaches anything outside, nothing of it kept, and goes to
 * the queue (workers/runs/inline-admission.ts decides which calls are tried). Undefined when
 * WEB_INLINE_RUNS is off.
 */
export async function startInlineRuns(
  deps: InlineRunsDeps,
  { maxLateMs = defaultMaxLateMs, admission: admissionOptions = {} }: { maxLateMs?: number; admission?: Partial<InlineAdmissionOptions> } = {},
): Promise<InlineRuns | undefined> {
  const { config, logger, clock } = deps;
  if (!config.webInlineRuns) return undefined;
  const prefix = config.queuePrefix;
  // Run metrics only: the commit is PostgreSQL's, and no event is published for a run answered here.
  const redis = openRedis(config, { maxRetriesPerRequest: 1, enableAutoPipelining: true });
  redis.on('error', (err) => logger.warn({ err: String(err) }, 'inline runs redis connection error'));
  const secrets = createAgentSecretsCache(deps.box);
  // Agent secrets are cached like a worker's, and dropped when the control channel says they changed.
  // While an admin has paused intake, calls go to the (paused) queue instead of running here.
  let intakePaused = false;
  const subscriber = await subscribeToControl(config, prefix, logger, (message) => {
    if (message.type === 'secrets') secrets.drop(message.agentName);
    else if (message.type === 'intake') intakePaused = message.paused;
  });
  intakePaused = await readIntakePaused(config, logger);
  // Each context in an isolate of its own (run-sandbox.ts), ~2 MB: fewer kept than a worker keeps, as this process serves calls first.
  setAgentThreadNice(config.agentThreadNice);
  const isolates = createContextPool({ maxIdle: maxIdleContexts });
  const runDeps: RunDeps = {
    ...deps,
    secrets,
    isolates,
    agents: createAgentCodeCache(),
    // A new conversation has no turn to wait for: never used here.
    turns: createConversationTurns<HeldConversation>(redis, shardsOf(config).prefixOf, async () => undefined),
    conversations: createConversationReader(deps.db),
    firstRuns: createFirstRunWriter(deps.db),
    commits: createConversationCommits(deps.db),
  };
  const runMetrics = createRunMetricsRecorder(redis, prefix);
  const admission = createInlineAdmission(clock, { ...defaultAdmission, ...admissionOptions });
  const lag = watchLoopLag();
  const short: ShortRunDeps = { runDeps, admission, logger, runMetrics };

  return {
    async run(data, inputs, claim) {
      // A web process that falls behind leaves its costly agents to the workers: its loop serves every call's HTTP.
      if (intakePaused) return 'queue';
      return runShort(short, data, inputs, { late: lag.lateMs() > maxLateMs, claim, paused: () => intakePaused });
    },
    async close() {
      lag.stop();
      isolates.clear();
      subscriber.disconnect();
      await runMetrics.close();
      redis.disconnect();
    },
  };
}

/** Whether intake is paused as this process starts, on a connection of its own for the moment (BullMQ loads its scripts on the one it is given). */
async function readIntakePaused(config: Config, logger: Logger): Promise<boolean> {
  const connection = openRedis(config, { maxRetriesPerRequest: 1 });
  connection.on('error', (err) => logger.warn({ err: String(err) }, 'inline runs redis connection error'));
  const queues = openRunQueues(shardsOf(config), connection, () => undefined);
  try {
    return await isIntakePaused(queues);
  } finally {
    await queues.close();
    connection.disconnect();
  }
}
