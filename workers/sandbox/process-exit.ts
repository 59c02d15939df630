import { lostIsolateCount } from './sandbox-isolate.js';

/**
 * Ends the process after a stop. `process.exit` runs the exit handlers, and isolated-vm's joins its
 * threads, one of which a lost isolate (sandbox-isolate.ts `lost`) parks for good: the process would
 * never end. With such an isolate the process ends at once, without exit handlers (SIGKILL; nothing
 * of ours is left to write by then: the callers have closed their servers, workers and pools).
 */
export function exitProcess(code: number): void {
  if (lostIsolateCount() === 0) process.exit(code);
  process.kill(process.pid, 'SIGKILL');
}
