import type { AskInput, JsonObject, OutputPart } from '../../shared/api.js';
import { describeCopiedError, locateInAgent, type ThrownDescription } from './error-codes.js';
import { disposalReason, type SandboxIsolate } from './sandbox-isolate.js';
import type { JournalEntry, SandboxError } from './sandbox.types.js';

/**
 * Every way a run in the sandbox ends (DESIGN §4), with a maker each: the one place that decides what
 * the agent's run ended with. Everything that ends a run calls `session.end(maker(...))`; the first
 * ending wins, and the session adds the output made until then (run-sandbox.ts). The endings decided
 * outside the agent's run are runs/run-endings.ts's.
 *
 *   success       returned            the agent's function returned (run-sandbox.ts)
 *   ask           asked               a live sys.ask (journaled-calls.ts)
 *   failCommand   failCommand         sys.fail (host-calls.ts)
 *   callFailed    endingForThrown     an uncaught sys.fetch failure
 *   errorInAgent  endingForThrown     a built-in error or a mistake the sandbox found inside the isolate
 *                 errorInAgent        a mistake found on the host (replay divergence, output or variables too large)
 *                 isolateLost         the memory limit (V8 disposed the isolate), or the pool stopped it (run-watch.ts)
 *                 endingForCrash      the call into the isolate failed, the isolate disposed
 *   timedOut      timedOut            MAX_AGENT_RUNTIME_MS (run-sandbox.ts)
 *                 outOfCpuTime        AGENT_CPU_MS (run-watch.ts)
 *                 leftRunning         code left running after the agent returned (run-watch.ts)
 *   stopped       cancelled           the run's signal aborted (a cancel), via stopped
 *   mustLogin     mustLogin           the run's signal aborted with sessionEnded (the session watch), via stopped;
 *                                     a success or ask whose session ended before its commit (workers/runs/session-watch.ts)
 *   unexpected    endingForThrown     the agent threw something that is not an Error of the isolate's
 *                 hostError           a sys call failed on the host (host-calls.ts)
 *                 endingForCrash      the call into the isolate failed otherwise
 */

export type FailureCode = 'failCommand' | 'callFailed' | 'errorInAgent' | 'unexpected' | 'timedOut' | 'stopped' | 'mustLogin';

/** How a run in the sandbox ended: its result code, what comes with it, and the output it made (all of it, whatever the ending). */
export type SandboxEnding =
  | { resultCode: 'success'; output: OutputPart[]; vars: JsonObject; conv: JsonObject }
  | {
      resultCode: 'ask';
      output: OutputPart[];
      vars: JsonObject;
      conv: JsonObject;
      askInput: AskInput;
      /** The journal to store with the pause: every entry up to and including this ask (no answers). */
      journal: JournalEntry[];
    }
  | { resultCode: FailureCode; output: OutputPart[]; error: SandboxError };

/** An ending as its maker makes it: the session adds the output as the run ends. */
export type WithoutOutput<E> = E extends unknown ? Omit<E, 'output'> : never;

/** An ending with an error, as its maker makes it. */
export type Failed<C extends FailureCode = FailureCode> = { resultCode: C; error: SandboxError };

/** `success`: the agent's function returned, with the variables as it left them. */
export function returned(variables: { vars: JsonObject; conv: JsonObject }): WithoutOutput<SandboxEnding> {
  return { resultCode: 'success', ...variables };
}

/** `ask`: a live sys.ask paused the run; `journal` is what the pause keeps to resume it. */
export function asked(ask: { vars: JsonObject; conv: JsonObject; askInput: AskInput; journal: JournalEntry[] }): WithoutOutput<SandboxEnding> {
  return { resultCode: 'ask', ...ask };
}

/** `failCommand`: the agent called sys.fail. */
export function failCommand(message: string): Failed<'failCommand'> {
  return failed('failCommand', message);
}

/** DESIGN §4's result code for what the agent threw: `callFailed` for a sys.fetch failure, `errorInAgent` for a built-in error or a mistake the sandbox found, `unexpected` for anything else. */
export function endingForThrown(thrown: ThrownDescription): Failed {
  const prefixed = thrown.kind !== 'fetch' && thrown.name !== '' && thrown.name !== 'Error';
  const message = prefixed ? `${thrown.name}: ${thrown.message}` : thrown.message;
  return { resultCode: codeByKind[thrown.kind], error: { message, ...locateInAgent(thrown.stack), ...(thrown.stack ? { stack: thrown.stack } : {}) } };
}

const codeByKind: Record<ThrownDescription['kind'], FailureCode> = {
  fetch: 'callFailed',
  builtin: 'errorInAgent',
  agent: 'errorInAgent',
  other: 'unexpected',
};

/** `errorInAgent`: a mistake of the agent's found on the host (an AgentFault: replay divergence, output or variables too large). */
export function errorInAgent(fault: Error): Failed<'errorInAgent'> {
  return failed('errorInAgent', fault.message);
}

/** `errorInAgent`: the run's isolate is gone: V8 hit the memory limit (isolated-vm disposes it then), or the pool stopped it. */
export function isolateLost(sandbox: SandboxIsolate): Failed<'errorInAgent'> {
  return failed('errorInAgent', disposalReason(sandbox));
}

/**
 * The call into the isolate failed. If we did not end the run, a disposed isolate means V8 hit the
 * memory limit (isolated-vm disposes it then), or the pool stopped an isolate a run left busy.
 */
export function endingForCrash(sandbox: SandboxIsolate | undefined, err: unknown): Failed {
  if (sandbox?.isolate.isDisposed) return isolateLost(sandbox);
  // A promise the agent left rejected with a built-in error (writing to a frozen built-in, say)
  // surfaces here once its run has returned: still the agent's mistake.
  const thrown = describeCopiedError(err);
  if (thrown.kind === 'builtin') return endingForThrown(thrown);
  const message = err instanceof Error ? err.message : String(err);
  return failed('unexpected', `sandbox error: ${message}`);
}

/** `unexpected`: a sys call failed on the host for a reason that is not the agent's. */
export function hostError(err: unknown): Failed<'unexpected'> {
  const message = err instanceof Error ? err.message : String(err);
  return failed('unexpected', `sandbox host error: ${message}`);
}

/** `timedOut`: the run was still going `maxRuntimeMs` after it started (MAX_AGENT_RUNTIME_MS). */
export function timedOut(maxRuntimeMs: number): Failed<'timedOut'> {
  return failed('timedOut', `the agent ran longer than ${maxRuntimeMs} ms`);
}

/** `timedOut`: the run computed for more than `limitMs` of CPU time (AGENT_CPU_MS). */
export function outOfCpuTime(limitMs: number): Failed<'timedOut'> {
  return failed('timedOut', `the agent used more than ${limitMs} ms of CPU time (AGENT_CPU_MS)`);
}

/** `timedOut`: the agent returned, but code it left running was still running `afterMs` later. */
export function leftRunning(afterMs: number): Failed<'timedOut'> {
  return failed('timedOut', `the agent returned, but code it left running (a loop of promise callbacks) was still running ${afterMs} ms later`);
}

/**
 * The reason a run's AbortSignal is aborted with when its caller's session ended (the session watch):
 * the run ends `mustLogin`. Any other reason is a cancel, and the run ends `stopped`.
 */
export const sessionEnded = Symbol('the session ended');

/** `stopped`: the run was cancelled. */
export function cancelled(): Failed<'stopped'> {
  return failed('stopped', 'the run was stopped');
}

/** `mustLogin`: the caller's session ended during the run. */
export function mustLogin(): Failed<'mustLogin'> {
  return failed('mustLogin', 'the session ended during the run; sign in again');
}

/** How a run stopped through its signal ends: `mustLogin` for sessionEnded, else `stopped`. */
export function stopped(signal: AbortSignal | undefined): Failed<'stopped' | 'mustLogin'> {
  return signal?.reason === sessionEnded ? mustLogin() : cancelled();
}

function failed<C extends FailureCode>(resultCode: C, message: string): Failed<C> {
  return { resultCode, error: { message } };
}
