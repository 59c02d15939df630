import type { JsonObject } from '../shared/api.js';
import type { RunJobData } from '../shared/jobs.js';
import type { RunResult } from './run-endings.js';

/**
 * Short runs answered by the web process that took the call (README, "Short runs are answered where
 * they arrive"; workers/inline-runs.ts runs them). A web process given one tries a non-streamed call
 * here first, a new conversation's or one first in line on its conversation, and queues it only when
 * told to.
 */
export interface InlineRuns {
  /**
   * Whether a call of this agent is tried here now (asked once per call, before its turn is taken):
   * a new conversation's (`onConversation` false), or one on an existing conversation, tried only
   * while this process keeps up.
   */
  tries(agentName: string, onConversation: boolean): boolean;
  /**
   * The result of a call `tries` admitted, or 'queue': run it through the queue instead (nothing of it was kept or sent).
   * A call on an existing conversation comes with its turn (`turn`, `turnFirst`): the turn is ended
   * here when the call is answered, and kept for the queued job otherwise.
   */
  run(data: RunJobData, inputs: JsonObject): Promise<RunResult | 'queue'>;
  close(): Promise<void>;
}
