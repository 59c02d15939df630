import type { JsonObject } from '../shared/api.js';
import type { RunJobData } from '../shared/jobs.js';
import type { RunResult } from './run-endings.js';

/**
 * Short runs answered by the web process that took the call (README, "Short runs are answered where
 * they arrive"; workers/inline-runs.ts runs them). A web process given one tries a non-streamed call
 * here first, on a new conversation or on one that had no call running or waiting (the call holds its
 * turn, `data.turn`, taken as first in line), and queues it only when told to.
 */
export interface InlineRuns {
  /**
   * The call's result, or 'queue': run it through the queue instead (nothing of it was kept or sent; a
   * turn it holds goes with it). A turn is left once the call is answered here.
   */
  run(data: RunJobData, inputs: JsonObject): Promise<RunResult | 'queue'>;
  close(): Promise<void>;
}
