import type { Principal } from './api.js';

/**
 * Data of one run job. Carries ids and the call's inputs sealed with SECRETS_KEY (they may hold
 * password answers), never plain secrets.
 */
export interface RunJobData {
  runId: string;
  requestId: string;
  /**
   * Where the run's events go. `inbox`: only to the web process that waits (the channel named here),
   * and parts only at the end. `log`: every event as it happens, numbered, to the run's own channel and
   * event list, so any web process can relay or re-attach (streamed calls, calls with an Idempotency-Key).
   */
  events: { kind: 'inbox'; channel: string } | { kind: 'log' };
  agentName: string;
  convid: string;
  /** True when the web process made up the convid: the conversation is created by this run. */
  newConversation: boolean;
  /** The call's place in the conversation's arrival order (runs/turns.ts); none for a new conversation. */
  turn: string | null;
  /** The call was first in its conversation's order when it arrived: it starts without waiting (runs/turns.ts Turn.first). */
  turnFirst?: boolean;
  caller: Principal;
  /** The session (its row id, not its token) of a call made with a session cookie: the run ends `mustLogin` if it ends. */
  sessionId?: string;
  /** A draft validation: the owner's draft runs instead of the published agent, with tracing on. */
  draft?: { id: string };
  sealedInputs: string;
  /** When the web process queued it (epoch ms). */
  submittedAt?: number;
  /** Its fair priority (runs/fair-priority.ts), which also orders its start among the runs its worker holds (workers/runs/start-gate.ts). */
  priority?: number;
  /** Submitted as a background run (/api/exec/submit): its end is sent to its account's webhook. */
  background?: boolean;
  /** With tracing on (DESIGN §18): the W3C trace context of the span that enqueued it, which the run's own trace links to. */
  traceparent?: string;
  /** A child run started by an agent's sys.call (DESIGN §19): the run that called it, and how deep it nests below its caller's run (which is 0). */
  parent?: { runId: string; depth: number };
}

/** Data of one firing of a schedule (DESIGN §19): its id only; what it runs is read from its row when it fires. */
export interface ScheduleFiringData {
  scheduleId: string;
}
