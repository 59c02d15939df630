import type { ExecutionResponse, OutputPart } from './api.js';
import type { ErrorCode } from './errors.js';

/**
 * What a worker publishes to the web process about a run. `refused` means the run did not happen
 * and the call gets an HTTP error (an unknown agent, a conversation busy for too long).
 */
export type RunEvent =
  | { runId: string; event: 'part'; data: OutputPart }
  | { runId: string; event: 'delta'; data: { text: string } }
  | { runId: string; event: 'end'; data: ExecutionResponse }
  | { runId: string; event: 'refused'; data: { code: ErrorCode; message: string } };
