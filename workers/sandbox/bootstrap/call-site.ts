import type { Payload, Run } from './host.js';
import { apply, RealError, regExpExec } from './intrinsics.js';

/** Where in the agent's compiled code a sys call was made (1-based, as V8 prints it). */
export interface CallSite {
  line: number;
  column: number;
}

// Tracing (draft validation): where in the agent a sys call was made, from a stack captured here.
// The first frame in the agent's file (error-codes.ts agentFileName) is the caller, at most four
// frames down (Error.stackTraceLimit is frozen at V8's 10): keep the sys functions calling `traced`
// directly.
const sitePattern = /\bagent\.js:(\d+):(\d+)/;

export function callSite(): CallSite | null {
  try {
    const stack = new RealError().stack;
    const match: RegExpExecArray | null = typeof stack === 'string' ? apply(regExpExec, sitePattern, [stack]) : null;
    return match ? { line: +match[1]!, column: +match[2]! } : null;
  } catch {
    return null;
  }
}

/** The payload of a host call, with the call's site when the run is traced. */
export function traced(run: Run, payload: Payload): Payload {
  if (run.trace) payload.site = callSite();
  return payload;
}
