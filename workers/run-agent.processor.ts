import type { Job, Queue } from 'bullmq';
import { shardsOf } from '../shared/shards.js';
import type { RedisClient } from '../runs/redis-connection.js';
import type { JsonObject } from '../shared/api.js';
import { isUnavailableError } from '../shared/errors.js';
import type { RunJobData } from '../shared/jobs.js';
import type { Logger } from '../shared/logger.js';
import { AbandonedRunError } from '../runs/commit.js';
import { endWithoutRun } from '../runs/end-without-run.js';
import { createRunEventPublisher } from '../runs/run-event-publisher.js';
import { databaseUnavailable, type RunEnding } from '../runs/run-endings.js';
import { releaseRunSlot } from '../runs/run-slots.js';
import type { RunMetricsRecorder } from '../runs/run-metrics.js';
import { executeRun } from './runs/execute-run.js';
import type { RunDeps, RunEventSink } from './runs/run-deps.js';
import type { RunControl } from './runs/run-control.js';
import type { SessionWatch } from './runs/session-watch.js';
import { sessionEnded } from './sandbox/sandbox-endings.js';
import { deliveryJobOptions, type WebhookJobData } from '../shared/webhook-jobs.js';
import { recordRunEnd, traceRun } from './tracing/run-span.js';
import { activeTraceparent } from '../runs/child-span.js';

export interface ProcessorDeps extends RunDeps {
  /** Connection for PUBLISH and the event lists (not the worker's blocking one). */
  publisher: RedisClient;
  /** Where a background run's end goes to be sent to its account's webhook, once committed. */
  webhooks: Queue<WebhookJobData>;
  control: RunControl;
  sessions: SessionWatch;
  runMetrics: RunMetricsRecorder;
  logger: Logger;
}

/**
 * The BullMQ processor for run jobs. A run is stopped through the control channel (a cancel) or its
 * own watches, never through worker.cancelJob: the processor takes no third parameter, so BullMQ makes
 * no AbortController for each job (its signal, once read, is some 0.8 KB a waiting run held for nothing).
 */
export function createRunAgentProcessor(deps: ProcessorDeps) {
  const processRun = async (job: Job<RunJobData>): Promise<void> => {
    const started = performance.now();
    const data = job.data;
    // Fair share is judged by this (DESIGN §16): how long the run waited for a worker.
    if (data.submittedAt !== undefined) deps.runMetrics.recordQueueWait(Date.now() - data.submittedAt);
    const tracked = deps.control.track(data.runId);
    // A call made with a session cookie ends `mustLogin` when the session ends while it runs.
    const stopWatching = data.sessionId ? deps.sessions.watch(data.sessionId, () => tracked.stop(sessionEnded)) : undefined;
    // However it ends, the run stops counting against its caller's runs in flight (DESIGN §16): before
    // its end is published, on the same connection, so a caller told of the end finds its place free.
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      releaseRunSlot(deps.publisher, shardsOf(deps.config), data.caller, data.runId).catch((err: unknown) => deps.logger.warn({ err: String(err), runId: data.runId }, 'run place not given back; it lapses'));
    };
    try {
      const publish = createRunEventPublisher(deps.publisher, shardsOf(deps.config).prefixOf(data.runId), data, replayMs(deps));
      const report = (err: unknown) => deps.logger.warn({ err, runId: data.runId }, 'run event not published');
      const sink: RunEventSink = {
        part: (part) => void publish({ event: 'part', data: part }).catch(report),
        delta: (text) => void publish({ event: 'delta', data: { text } }).catch(report),
        trace: (event) => void publish({ event: 'trace', data: event }).catch(report),
      };
      const inputs = JSON.parse(deps.box.open(data.sealedInputs)) as JsonObject;
      const result = await executeRun(deps, data, inputs, sink, tracked.signal).catch((err: unknown) => {
        if (err instanceof AbandonedRunError) {
          deps.logger.warn({ runId: data.runId, requestId: data.requestId }, err.message);
          return undefined;
        }
        // PostgreSQL went away mid-run: nothing was committed, and the caller is told 503 like any call then.
        if (isUnavailableError(err)) return unavailable(deps, data, err);
        throw err;
      });
      release();
      recordRunEnd(result);
      if (!result) return;
      if (result.kind === 'refused') {
        await publish({ event: 'refused', data: { code: result.code, message: result.message } }).catch(report);
        return;
      }
      deps.logger.info({ runId: data.runId, requestId: data.requestId, agentName: data.agentName, resultCode: result.response.resultCode }, 'run ended');
      deps.runMetrics.record(result.response.resultCode, performance.now() - started);
      await publish({ event: 'end', data: result.response }).catch(report);
      // Its delivery was written with its record (if its account has a webhook); a lost job is queued again by the sweep.
      if (data.background) {
        await deps.webhooks.add('deliver', { kind: 'deliver', runId: data.runId, traceparent: activeTraceparent() }, deliveryJobOptions(data.runId)).catch((err: unknown) => deps.logger.warn({ err: String(err), runId: data.runId }, 'webhook delivery not queued; the sweep will'));
      }
    } finally {
      release();
      stopWatching?.();
      tracked.done();
      // Its children were stopped by its end, or had ended: their note goes (runs/run-children.ts).
      void deps.childRuns?.parentEnded(data.runId);
    }
  };
  // The run is a trace of its own (DESIGN §18), its log lines within it.
  return (job: Job<RunJobData>): Promise<void> => traceRun(job.data, () => processRun(job));
}

function unavailable(deps: ProcessorDeps, data: RunJobData, err: unknown): RunEnding {
  deps.logger.warn({ err: String(err), runId: data.runId, requestId: data.requestId }, 'run ended: PostgreSQL unavailable, nothing kept');
  return databaseUnavailable();
}

function replayMs(deps: ProcessorDeps): number {
  return deps.config.streamReplaySeconds * 1000;
}

/**
 * A run whose job failed (its worker died and the stall checker gave up on it, or the processor threw):
 * nothing of it was committed, so it ends `unexpected` the way the web process ends a run that never
 * ran (runs/end-without-run.ts): recorded for the error report, its turn left, its caller told.
 */
export async function reportFailedRun(deps: ProcessorDeps, data: RunJobData, reason: string): Promise<void> {
  deps.logger.error({ runId: data.runId, requestId: data.requestId, reason }, 'run failed');
  const endDeps = { db: deps.db, redis: deps.publisher, config: deps.config };
  await endWithoutRun(endDeps, { ending: 'jobFailed', run: data, reason }, (step, err) => {
    if (step === 'record') deps.logger.warn({ err, runId: data.runId }, 'failed run not recorded');
    else if (step === 'announce') deps.logger.warn({ err, runId: data.runId }, 'failed run not announced');
    // A turn not left is dropped as a leftover by the next call's wait.
  });
  // Nothing runs orphaned (DESIGN §19): its children still queued or running are stopped, as a cancel of it would.
  await deps.childRuns?.stopChildrenOf(data.runId).catch((err: unknown) => deps.logger.warn({ err: String(err), runId: data.runId }, 'children of a failed run not stopped'));
}
