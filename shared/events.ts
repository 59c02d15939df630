import type { ExecutionResponse, OutputPart } from './api.js';
import type { ErrorCode } from './errors.js';
import type { TraceEvent } from './trace.js';

/**
 * What a worker publishes to the web process about a run. `refused` means the run did not happen
 * and the call gets an HTTP error (an unknown agent, a conversation busy for too long). `end` carries
 * the whole execution response, output included (a stream leaves the output out when it relays it).
 */
export type RunEvent =
  | { runId: string; event: 'part'; data: OutputPart }
  | { runId: string; event: 'delta'; data: { text: string } }
  | { runId: string; event: 'trace'; data: TraceEvent }
  | { runId: string; event: 'end'; data: ExecutionResponse }
  | { runId: string; event: 'refused'; data: { code: ErrorCode; message: string } };

/**
 * An event of a logged run, numbered. Number 1 is the `start` event, which the web process makes
 * itself from what it knows before the run begins; the worker's events are numbered from 2.
 */
export type LoggedEvent = RunEvent & { id: number };

export const firstWorkerEventId = 2;

/** What goes over the control channel every worker listens on. */
export type ControlMessage =
  /** Stop this run if it is going, or as soon as a worker picks it up. */
  | { type: 'cancel'; runId: string }
  /** A call on this conversation ended in another process: the next one may start. */
  | { type: 'turn'; convid: string }
  /** An agent name's secrets changed: workers read them again (the message names no secret). */
  | { type: 'secrets'; agentName: string }
  /** An admin paused or resumed the run queues' intake: a web process then runs no call itself either. */
  | { type: 'intake'; paused: boolean };
