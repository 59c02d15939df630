import type { JsonObject } from '../../shared/api.js';
import { isUnavailableError } from '../../shared/errors.js';
import type { RunJobData } from '../../shared/jobs.js';
import type { Logger } from '../../shared/logger.js';
import { databaseUnavailable, type RunEnding } from '../../runs/run-endings.js';
import type { RunMetricsRecorder } from '../../runs/run-metrics.js';
import { recordRunEnd, traceRun } from '../tracing/run-span.js';
import type { InlineAdmission } from './inline-admission.js';
import { runInline, type InlineCommit } from './inline-run.js';
import type { RunDeps } from './run-deps.js';

export interface ShortRunDeps {
  runDeps: RunDeps;
  admission: InlineAdmission;
  logger: Logger;
  runMetrics: RunMetricsRecorder;
}

/**
 * One run tried as a short run where it was asked for, with no queue, job or event between (inline-run.ts):
 * a web process's new conversation (workers/inline-runs.ts), or a worker's child of sys.call
 * (child-runs.ts). Its result; 'queue' when it was not admitted or was not short after all (nothing
 * of it kept or sent: queue it); 'withdrawn' when `mayCommit` said no or its Idempotency-Key's record
 * (`claim`) was another call's (nothing kept). `late`: the
 * process's event loop runs late (inline-admission.ts); `paused`: the process takes no run now.
 */
export async function runShort(
  deps: ShortRunDeps,
  data: RunJobData,
  inputs: JsonObject,
  { late, mayCommit, claim, paused = () => false }: { late: boolean; paused?: () => boolean } & InlineCommit,
): Promise<RunEnding | 'queue' | 'withdrawn'> {
  const tried = deps.admission.tryHere(data.agentName, late);
  if (!tried) return 'queue';
  try {
    return await runTried(deps, data, inputs, { mayCommit, claim, paused });
  } finally {
    tried();
  }
}

/** runShort for a call `tryHere` admitted. */
async function runTried(
  deps: ShortRunDeps,
  data: RunJobData,
  inputs: JsonObject,
  { mayCommit, claim, paused }: { paused: () => boolean } & InlineCommit,
): Promise<RunEnding | 'queue' | 'withdrawn'> {
  const { admission } = deps;
  const started = performance.now();
  const entry = {
    mayLoad: admission.mayLoad,
    entered: (cpuMs: number) => admission.entered(data.agentName, cpuMs),
    // Its agent sent to the queue meanwhile (another of its runs waited on the host), or intake paused: not tried here after all.
    stillTried: () => !paused() && admission.admits(data.agentName, false),
  };
  const result = await traceRun(data, async () => {
    const ran = await runInline(deps.runDeps, data, inputs, entry, { mayCommit, claim }).catch((err: unknown) => {
      // As a worker's run then: nothing was committed, and the caller is told 503.
      if (isUnavailableError(err)) return databaseUnavailable();
      throw err;
    });
    recordRunEnd(ran);
    return ran;
    // A try handed to the queue makes no span: the run's span is the one its worker makes.
  }, (ran) => 'queue' in ran);
  if ('withdrawn' in result) return 'withdrawn';
  if ('queue' in result) {
    if (result.queue === 'waits' || result.queue === 'long') admission.notShort(data.agentName, result.queue);
    return 'queue';
  }
  admission.wasShort(data.agentName);
  if (result.kind === 'response') {
    deps.logger.info({ runId: data.runId, requestId: data.requestId, agentName: data.agentName, resultCode: result.response.resultCode, inline: true }, 'run ended');
    deps.runMetrics.record(result.response.resultCode, performance.now() - started);
  }
  return result;
}
