import { Redis } from 'ioredis';
import type { JsonObject } from '../shared/api.js';
import type { Clock } from '../shared/clock.js';
import type { Config } from '../shared/config.js';
import { controlChannel } from '../shared/channels.js';
import { isUnavailableError } from '../shared/errors.js';
import type { ControlMessage } from '../shared/events.js';
import type { RunJobData } from '../shared/jobs.js';
import type { Logger } from '../shared/logger.js';
import type { SecretBox } from '../shared/secret-box.js';
import type { Db } from '../db/database.js';
import { createConversationCommits } from '../runs/conversation-commits.js';
import { createConversationReader } from '../runs/conversation-reader.js';
import { createFirstRunWriter } from '../runs/first-run-writer.js';
import type { InlineRuns } from '../runs/inline-runs.js';
import { databaseUnavailable } from '../runs/run-endings.js';
import { createRunMetricsRecorder } from '../runs/run-metrics.js';
import { createConversationTurns } from '../runs/turns.js';
import { createAgentCodeCache } from './runs/agent-code-cache.js';
import { createAgentSecretsCache } from './runs/agent-secrets-cache.js';
import type { HeldConversation } from './runs/held-conversation.js';
import { createInlineAdmission, defaultAdmission, type InlineAdmissionOptions } from './runs/inline-admission.js';
import { watchLoopLag } from './runs/loop-lag.js';
import { runInline, runInlineOnConversation, type EntryHooks } from './runs/inline-run.js';
import type { RunDeps } from './runs/run-deps.js';
import { createContextPool } from './sandbox/context-pool.js';
import { subscribeToControl } from './control-channel.js';

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
 * The web process's short runs (runs/inline-runs.ts): a call whose agent is over within one
 * synchronous entry into its sandbox (no async sys call, at most 10 ms of computing) runs here, with no
 * queue, job or event between: a new conversation's, committed as a worker's first run is, or one on
 * a conversation with no call running or waiting on it (its caller took the turn, first in line), read
 * and committed as a worker's call on it is, the turn ended here. One that turns out not to be so
 * short is stopped before it reaches anything outside, nothing of it kept, and goes to the queue
 * (workers/runs/inline-admission.ts decides which calls are tried), holding its turn. Undefined when
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
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableAutoPipelining: true });
  redis.on('error', (err) => logger.warn({ err: String(err) }, 'inline runs redis connection error'));
  const secrets = createAgentSecretsCache(deps.box);
  // Agent secrets are cached like a worker's, and dropped when the control channel says they changed.
  const subscriber = await subscribeToControl(config.redisUrl, prefix, logger, (message) => {
    if (message.type === 'secrets') secrets.drop(message.agentName);
  });
  // Each context in an isolate of its own (run-sandbox.ts), ~2 MB: fewer kept than a worker keeps, as this process serves calls first.
  const isolates = createContextPool({ maxIdle: maxIdleContexts });
  const runDeps: RunDeps = {
    ...deps,
    secrets,
    isolates,
    agents: createAgentCodeCache(),
    // Only ended here (a call answered here never waits for its turn): the next call in line, when it
    // waits in a worker, is told on the control channel.
    turns: createConversationTurns<HeldConversation>(redis, prefix, (convid) => redis.publish(controlChannel(prefix), JSON.stringify({ type: 'turn', convid } satisfies ControlMessage))),
    conversations: createConversationReader(deps.db),
    firstRuns: createFirstRunWriter(deps.db),
    commits: createConversationCommits(deps.db),
  };
  const runMetrics = createRunMetricsRecorder(redis, prefix);
  const admission = createInlineAdmission(clock, { ...defaultAdmission, ...admissionOptions });
  const lag = watchLoopLag();

  /** A new conversation's run, or one on a conversation whose turn the call holds; the turn ends here unless the run goes to the queue. */
  const runHere = async (data: RunJobData, inputs: JsonObject, entry: EntryHooks) => {
    if (data.newConversation) return runInline(runDeps, data, inputs, entry);
    const turn = data.turn;
    if (!turn || !data.turnFirst) throw new Error('an inline run on a conversation needs the turn, first in line');
    let result: Awaited<ReturnType<typeof runInlineOnConversation>> | undefined;
    try {
      result = await runInlineOnConversation(runDeps, data, inputs, entry);
      return result;
    } finally {
      // Left behind, the entry would hold the conversation's later calls until it is stale.
      if (!result || !('queue' in result)) {
        await runDeps.turns.release(data.convid, turn).catch((err: unknown) => logger.warn({ err: String(err), runId: data.runId }, 'turn not released'));
      }
    }
  };

  return {
    tries(agentName, onConversation) {
      // A web process that falls behind leaves its costly agents to the workers (its loop serves every
      // call's HTTP), and every call on an existing conversation: under a load that kept it late, those
      // answered here cost the machine more than queued ones (docs/operations.md, "Short runs on idle conversations").
      const late = lag.lateMs() > maxLateMs;
      if (onConversation && late) return false;
      return admission.admits(agentName, late);
    },
    async run(data, inputs) {
      const started = performance.now();
      const entry = { mayLoad: admission.mayLoad, entered: (cpuMs: number) => admission.entered(data.agentName, cpuMs) };
      const result = await runHere(data, inputs, entry).catch((err: unknown) => {
        // As a worker's run then: nothing was committed, and the caller is told 503.
        if (isUnavailableError(err)) return databaseUnavailable();
        throw err;
      });
      if ('queue' in result) {
        if (result.queue === 'waits' || result.queue === 'long') admission.notShort(data.agentName, result.queue);
        return 'queue';
      }
      admission.wasShort(data.agentName);
      if (result.kind === 'response') {
        logger.info({ runId: data.runId, requestId: data.requestId, agentName: data.agentName, resultCode: result.response.resultCode, inline: true }, 'run ended');
        runMetrics.record(result.response.resultCode, performance.now() - started);
      }
      return result;
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
