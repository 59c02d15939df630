import type { Principal } from './api.js';

/**
 * Data of one run job. Carries ids and the call's inputs sealed with SECRETS_KEY (they may hold
 * password answers), never plain secrets.
 */
export interface RunJobData {
  runId: string;
  requestId: string;
  /** Channel the run's events are published to (the inbox of the web process that waits). */
  replyTo: string;
  stream: boolean;
  agentName: string;
  convid: string;
  /** True when the web process made up the convid: the conversation is created by this run. */
  newConversation: boolean;
  caller: Principal;
  sealedInputs: string;
}
