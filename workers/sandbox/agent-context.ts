import ivm from 'isolated-vm';
import { agentModuleGlobal } from '../../shared/compile-agent.js';
import { bootstrapSource } from './bootstrap-source.js';
import { bootstrapFileName, maxPendingCalls, type RunConfig, type RunResult, type StartRun } from './sandbox-protocol.js';
import { agentFileName, describeCopiedError, type ThrownDescription } from './error-codes.js';
import { endForTooManyPendingCalls, haltReply, handleAsyncCall, handleSyncCall } from './host-calls.js';
import type { SandboxIsolate } from './sandbox-isolate.js';
import type { Session } from './session.js';

/**
 * One agent's code loaded into a context of a sandbox isolate: the bootstrap evaluated (the realm
 * locked down) and the compiled module ready to be instantiated. It serves one run at a time
 * (Math.random and Date are per-context globals); the runs of one caller share the isolate, each in
 * a context of its own. Loading one costs ~4 ms of CPU, mostly the lockdown; starting a run in it
 * costs one call into the isolate, which is why context-pool.ts keeps them warm between runs.
 */
export interface AgentContext {
  readonly sandbox: SandboxIsolate;
  /** Runs started in it so far. */
  runs: number;
  readonly binding: HostBinding;
  readonly start: ivm.Reference<StartRun>;
  readonly context: ivm.Context;
  /** The host's sync and async call references, released with the context. */
  readonly host: readonly ivm.Reference[];
  /** Released (its run ended unclean, or the pool let it go); never used again. */
  released: boolean;
}

/** The run whose host calls are answered; a call carrying any other token gets a halt reply. */
interface HostBinding {
  token: number;
  session: Session | undefined;
  /** Async host calls (sleep, fetch, ask) not answered yet. */
  pendingCalls: number;
}

export type LoadResult = { ok: true; agent: AgentContext } | { ok: false; thrown: ThrownDescription };

/**
 * Loads the agent's code into a new context of `sandbox`. A compile error is the agent's (`ok:
 * false`); anything else thrown is a sandbox failure, or the memory limit when the isolate is disposed.
 */
export async function loadAgentContext(sandbox: SandboxIsolate): Promise<LoadResult> {
  const { isolate } = sandbox;
  sandbox.contexts += 1;
  let context: ivm.Context | undefined;
  try {
    context = await isolate.createContext();
    let agentModule: ivm.Reference;
    try {
      const script = await isolate.compileScript(wrapAsFactory(sandbox.key.code), { filename: agentFileName, lineOffset: -1 });
      agentModule = (await script.run(context, { reference: true })) as ivm.Reference;
    } catch (err) {
      if (isolate.isDisposed) throw err;
      releaseHandles(sandbox, context);
      return { ok: false, thrown: describeCopiedError(err) };
    }
    const binding: HostBinding = { token: 0, session: undefined, pendingCalls: 0 };
    const host = hostReferences(binding);
    const start = (await context.evalClosure(bootstrapSource, [...host, agentModule.derefInto()], {
      filename: bootstrapFileName,
      result: { reference: true },
    })) as ivm.Reference<StartRun>;
    return { ok: true, agent: { sandbox, runs: 0, binding, start, context, host, released: false } };
  } catch (err) {
    releaseHandles(sandbox, context);
    throw err;
  }
}

/** The host's sync and async call references, answering only the run `binding` holds. */
function hostReferences(binding: HostBinding): [ivm.Reference, ivm.Reference] {
  const hostSync = new ivm.Reference((token: unknown, op: unknown, payload: unknown, outbox: unknown) => {
    const session = boundSession(binding, token);
    return session ? handleSyncCall(session, op, payload, outbox) : haltReply();
  });
  const hostAsync = new ivm.Reference(async (token: unknown, op: unknown, payload: unknown, outbox: unknown) => {
    const session = boundSession(binding, token);
    if (!session) return haltReply();
    // The bootstrap stops at the same limit; this holds even if it did not.
    if (binding.pendingCalls >= maxPendingCalls) return endForTooManyPendingCalls(session);
    binding.pendingCalls += 1;
    try {
      return await handleAsyncCall(session, op, payload, outbox);
    } finally {
      binding.pendingCalls -= 1;
    }
  });
  return [hostSync, hostAsync];
}

/**
 * Runs the agent once for `session`, in one call into the isolate. The session is bound until the
 * result comes back. isolated-vm delivers it once the isolate's microtasks have drained, after any
 * host call the run's leftover code made meanwhile; a call still unanswered then makes the context
 * not reusable, like one the isolate itself counted.
 */
export async function runInAgentContext(agent: AgentContext, session: Session): Promise<RunResult> {
  agent.runs += 1;
  const token = (agent.binding.token += 1);
  agent.binding.session = session;
  const run = session.run;
  const config: RunConfig = {
    agentName: run.agentName,
    convid: run.convid,
    inputs: run.inputs,
    caller: { kind: run.caller.kind, id: run.caller.id, role: run.caller.role },
    vars: run.vars,
    conv: run.conv,
    randomSeed: run.randomSeed,
    trace: run.onTrace !== undefined,
    secrets: run.secrets ?? {},
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

/**
 * Lets go of the context: its host references answer nothing more (a later token never comes), and
 * V8 collects it once no code of it is left pending. What it left queued can still run in the
 * isolate meanwhile; context-pool.ts watches for that.
 */
export function releaseAgentContext(agent: AgentContext): void {
  if (agent.released) return;
  agent.released = true;
  agent.binding.token += 1;
  agent.binding.session = undefined;
  if (!agent.sandbox.isolate.isDisposed) for (const reference of [agent.start, ...agent.host]) reference.release();
  releaseHandles(agent.sandbox, agent.context);
}

function releaseHandles(sandbox: SandboxIsolate, context: ivm.Context | undefined): void {
  sandbox.contexts -= 1;
  try {
    if (context && !sandbox.isolate.isDisposed) context.release();
  } catch {
    // The isolate went away meanwhile.
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
