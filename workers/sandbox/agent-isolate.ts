import ivm from 'isolated-vm';
import { agentModuleGlobal } from '../../shared/compile-agent.js';
import { bootstrapFileName, bootstrapSource, maxPendingCalls, type RunConfig, type RunResult, type StartRun } from './bootstrap.js';
import { agentFileName, describeCopiedError, type ThrownDescription } from './error-codes.js';
import { endForTooManyPendingCalls, haltReply, handleAsyncCall, handleSyncCall } from './host-calls.js';
import type { SandboxRun } from './sandbox.types.js';
import type { Session } from './session.js';

/**
 * What an isolate is loaded for. A warm isolate serves only runs that match all three: the agent
 * name too, so two agents that happen to compile to the same code never share what one of them
 * left in the built-ins.
 */
export type AgentIsolateKey = Pick<SandboxRun, 'code' | 'agentName' | 'memoryMb'>;

/**
 * One agent's code loaded into an isolate: a context with the bootstrap evaluated and the compiled
 * module ready to be instantiated. Building one costs ~2 ms of CPU; starting a run in it costs one
 * call into the isolate, which is why isolate-pool.ts keeps them warm between runs of the same code.
 * It serves one run at a time: Math.random and Date are per-context globals.
 */
export interface AgentIsolate {
  readonly isolate: ivm.Isolate;
  readonly key: AgentIsolateKey;
  /** Runs started in it so far. */
  runs: number;
  readonly binding: HostBinding;
  readonly start: ivm.Reference<StartRun>;
}

/** The run whose host calls are answered; a call carrying any other token gets a halt reply. */
interface HostBinding {
  token: number;
  session: Session | undefined;
  /** Async host calls (sleep, fetch, ask) not answered yet. */
  pendingCalls: number;
}

export type LoadResult = { ok: true; agent: AgentIsolate } | { ok: false; thrown: ThrownDescription };

/**
 * Loads the agent's code into a fresh isolate. A compile error is the agent's (`ok: false`);
 * anything else thrown is a sandbox failure, or the memory limit when the isolate is disposed.
 */
export async function loadAgentIsolate(isolate: ivm.Isolate, key: AgentIsolateKey): Promise<LoadResult> {
  const context = await isolate.createContext();
  let agentModule: ivm.Reference;
  try {
    const script = await isolate.compileScript(wrapAsFactory(key.code), { filename: agentFileName, lineOffset: -1 });
    agentModule = (await script.run(context, { reference: true })) as ivm.Reference;
  } catch (err) {
    if (isolate.isDisposed) throw err;
    return { ok: false, thrown: describeCopiedError(err) };
  }
  const binding: HostBinding = { token: 0, session: undefined, pendingCalls: 0 };
  const hostSync = new ivm.Reference((token: unknown, op: unknown, payload: unknown) => {
    const session = boundSession(binding, token);
    return session ? handleSyncCall(session, op, payload) : haltReply();
  });
  const hostAsync = new ivm.Reference(async (token: unknown, op: unknown, payload: unknown) => {
    const session = boundSession(binding, token);
    if (!session) return haltReply();
    // The bootstrap stops at the same limit; this holds even if it did not.
    if (binding.pendingCalls >= maxPendingCalls) return endForTooManyPendingCalls(session);
    binding.pendingCalls += 1;
    try {
      return await handleAsyncCall(session, op, payload);
    } finally {
      binding.pendingCalls -= 1;
    }
  });
  const start = (await context.evalClosure(bootstrapSource, [hostSync, hostAsync, agentModule.derefInto()], {
    filename: bootstrapFileName,
    result: { reference: true },
  })) as ivm.Reference<StartRun>;
  return { ok: true, agent: { isolate, key, runs: 0, binding, start } };
}

/**
 * Runs the agent once for `session`, in one call into the isolate. The session is bound until the
 * result comes back. isolated-vm delivers it once the isolate's microtasks have drained, after any
 * host call the run's leftover code made meanwhile; a call still unanswered then makes the isolate
 * not reusable, like one the isolate itself counted.
 */
export async function runInAgentIsolate(agent: AgentIsolate, session: Session): Promise<RunResult> {
  agent.runs += 1;
  const token = (agent.binding.token += 1);
  agent.binding.session = session;
  const run = session.run;
  const config: RunConfig = {
    agentName: run.agentName,
    convid: run.convid,
    inputs: run.inputs,
    caller: { kind: run.caller.kind, id: run.caller.id, role: run.caller.role },
    history: run.history,
    vars: run.vars,
    conv: run.conv,
    randomSeed: run.randomSeed,
    trace: run.onTrace !== undefined,
  };
  try {
    const text: unknown = await agent.start.apply(undefined, [token, JSON.stringify(config)], { result: { promise: true, copy: true } });
    const result = JSON.parse(String(text)) as RunResult;
    if (result.kind === 'returned' && agent.binding.pendingCalls > 0) result.reusable = false;
    return result;
  } finally {
    if (agent.binding.token === token) agent.binding.session = undefined;
  }
}

export function disposeIsolate(isolate: ivm.Isolate): void {
  try {
    if (!isolate.isDisposed) isolate.dispose();
  } catch {
    // Already disposed by isolated-vm (memory limit) between the check and the call.
  }
}

function boundSession(binding: HostBinding, token: unknown): Session | undefined {
  return token === binding.token ? binding.session : undefined;
}

/**
 * The compiled module (an iife assigning `var __agentModule`) as a function that runs it and returns
 * the module, so each run gets fresh module state from code compiled once. Strict, as the ES module
 * it was written as (esbuild's iife does not say so): writing to a frozen built-in throws. The opening
 * line is compensated by `lineOffset: -1`, so stack frames keep the compiled code's line and column.
 */
function wrapAsFactory(code: string): string {
  const name = agentModuleGlobal;
  return `(function () { 'use strict';\n${code}\nreturn typeof ${name} === 'undefined' ? undefined : ${name};\n})`;
}
