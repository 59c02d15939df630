import type { Context } from '@opentelemetry/api';
import type { OutputChange, Output } from './output.js';
import type { AllowRule } from '../outbound-http/destination-guard.js';
import type { FetchSlots } from '../outbound-http/fetch-slots.js';
import type { FetchStreams } from './fetch-streams.js';
import type { Journal } from './journal.js';
import type { SandboxEnding, WithoutOutput } from './sandbox-endings.js';
import type { InlineDeclined, InlineEntry, SandboxRun } from './sandbox.types.js';

/** The host side of one run: what the sys calls from the isolate read and change. */
export interface Session {
  run: SandboxRun;
  /** An inline run's entry (run-sandbox.ts runSandboxInline). */
  inline?: InlineEntry;
  journal: Journal;
  output: Output;
  allow: readonly AllowRule[];
  /** Wall-clock end of the run (epoch ms). */
  deadline: number;
  /** Set once, as the run ends. */
  ended: boolean;
  /** Timers of the run's pending sleeps, cleared as it ends (no abort listener per sleep: a run may have 1,000). */
  timers: Set<NodeJS.Timeout>;
  /** The run's sys.fetch slots (16 in flight, the others waiting), closed as it ends. */
  fetchSlots: FetchSlots;
  /** Aborted as the run ends (sys.call's children: agent-calls.ts); made at the first call. */
  children?: AbortController;
  /** `text` with the run's secret values masked (for what the journal records of a request). */
  mask: (text: string) => string;
  /** The bodies of its streamed fetches the agent may still read. */
  fetchStreams: FetchStreams;
  /**
   * Live reports (parts, deltas, log lines) made while the run is entered synchronously, sent as the
   * entry returns, in order; dropped with the entry when it is interrupted and the run starts over.
   */
  heldReports?: Array<() => void>;
  /** The run's trace context, its sys calls' spans' parent (workers/tracing/sys-call-spans.ts); undefined without tracing. */
  traceContext?: Context;
  /** When the agent returned or threw (epoch ms), as the isolate said; its result follows once its code is over (run-watch.ts). */
  returnedAt?: number;
  /**
   * Ends the run with an ending of sandbox-endings.ts (or an inline run declined); the first ending
   * wins, and the output made so far is added to it. Its context goes back to the pool of warm ones
   * once the run's code is over with nothing left pending (run-sandbox.ts); otherwise it is released.
   */
  end: (ending: WithoutOutput<SandboxEnding> | InlineDeclined) => void;
}

/** The agent of the session's run returned (or threw); its result follows once its code is over. */
export function noteReturned(session: Session): void {
  session.returnedAt ??= Date.now();
}

export function hasEnded(session: Session): boolean {
  return session.ended;
}

/** Reports an output change live, unless the run is already over. */
export function emitChange(session: Session, change: OutputChange): void {
  if (hasEnded(session)) return;
  if (change.kind === 'part') report(session, () => session.run.onPart?.(change.part));
  else report(session, () => session.run.onDelta?.(change.text));
}

/** Sends a live report now, or once the synchronous entry it was made in returns (heldReports). */
export function report(session: Session, send: () => void): void {
  if (session.heldReports) session.heldReports.push(send);
  else send();
}

/** Sends the reports held during a synchronous entry, in order, and reports live again. */
export function releaseReports(session: Session): void {
  const held = session.heldReports ?? [];
  session.heldReports = undefined;
  for (const send of held) send();
}
