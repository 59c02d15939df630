import type { SandboxError } from './sandbox.types.js';

/**
 * Why a run was stopped from outside, carried as its AbortSignal's reason. A cancel ends it `stopped`;
 * the end of the caller's session ends it `mustLogin`. Any other reason counts as a cancel.
 */
export interface RunStop {
  resultCode: 'stopped' | 'mustLogin';
  error: SandboxError;
}

export const cancelled: RunStop = { resultCode: 'stopped', error: { message: 'the run was stopped' } };

export const sessionEnded: RunStop = { resultCode: 'mustLogin', error: { message: 'the session ended during the run; sign in again' } };

/** The stop an aborted signal stands for. */
export function stopOf(signal: AbortSignal | undefined): RunStop {
  return signal?.reason === sessionEnded ? sessionEnded : cancelled;
}
