import type { JsonObject } from '../shared/api.js';
import type { NewIdempotencyKey } from '../db/schema.js';
import type { RunJobData } from '../shared/jobs.js';
import type { RunEnding } from './run-endings.js';

/**
 * Short runs answered by the web process that took the call (README, "Short runs are answered where
 * they arrive"; workers/inline-runs.ts runs them). A web process given one tries a new conversation's
 * non-streamed call here first and queues it only when told to.
 */
export interface InlineRuns {
  /**
   * The call's result, or 'queue': run it through the queue instead (nothing of it was kept or sent).
   * With `claim`, the record of the call's Idempotency-Key, written by the run's commit (a run has no
   * effect outside until then): 'withdrawn' when another call with the key was recorded first,
   * nothing of the run kept.
   */
  run(data: RunJobData, inputs: JsonObject, claim?: NewIdempotencyKey): Promise<RunEnding | 'queue' | 'withdrawn'>;
  close(): Promise<void>;
}
