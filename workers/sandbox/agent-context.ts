import ivm from 'isolated-vm';
import { agentModuleGlobal } from '../../shared/compile-agent.js';
import { bootstrapSource } from './bootstrap-source.js';
import { bootstrapFileName, maxPendingCalls, type RunConfig, type IsolateReport, type SettledRun, type StartRun } from './sandbox-protocol.js';
import { agentFileName, describeCopiedError, type ThrownDescription } from './error-codes.js';
import { endForTooManyPendingCalls, haltReply, handleAsyncCall, handleSyncCall, replyWithError } from './host-calls.js';
import { isIsolateIdle, type SandboxIsolate } from './sandbox-isolate.js';
import { hasEnded, noteReturned, releaseReports, type Session } from './session.js';

/**
 * One agent's code loaded into a context of a sandbox isolate: the bootstrap evaluated (the realm
 * locked down) and the compiled module ready to be instantiated. Runs of one agent for one caller share
 * it, several at once (each with its own module, `sys` and host calls; bootstrap/main.ts): a run that
 * waits on the host holds no context of its own. Loading one costs ~4 ms of CPU and ~0.3 MB, mostly the
 * lockdown; starting a run in it costs one call into the isolate, which is why context-pool.ts keeps
 * them warm between runs and puts runs together in them.
 */
export interface AgentContext {
  readonly sandbox: SandboxIsolate;
  /** Runs started in it so far. */
  runs: number;
  /** Runs using it now (taken from the pool, or loaded for, and not given back yet: context-pool.ts). */
  active: number;
  /** Takes no new run: one ended in it leaving code behind, or it is due to retire. Released once `active` is 0. */
  closed: boolean;
  readonly binding: HostBinding;
  readonly start: ivm.Reference<StartRun>;
  readonly context: ivm.Context;
  /** The host's sync and async call references, released with the context. */
  readonly host: readonly ivm.Reference[];
  /** Released (its run ended unclean, or the pool let it go); never used again. */
  released: boolean;
}

/** The runs whose host calls are answered, by token; a call carrying any other token gets a halt reply. */
interface HostBinding {
  runs: Map<number, BoundRun>;
  /** The token of the run started last; each run gets the next. */
  lastToken: number;
  /** The context's StartRun, once loaded: async host calls are answered through its `reply` step. */
  start: ivm.Reference<StartRun> | undefined;
}

/** A run in progress in a context, from its start until its result is back (also after it ended). */
interface BoundRun {
  readonly session: Session;
  /** How to answer each async host call (sleep, fetch, ask) not answered yet: the first answer counts. */
  readonly waiting: Set<(reply: string) => void>;
  /** A sync host call of the run is being answered: its code waits for the reply. */
  inSyncCall: boolean;
}

/** Each session's run in its context, while it is bound there and after (what waitsOnHost reads). */
const boundRuns = new WeakMap<Session, BoundRun>();

export type LoadResult = { ok: true; agent: AgentContext } | { ok: false; thrown: ThrownDescription };

/**
 * Loads the agent's code into a new context of `sandbox`. A compile error is the agent's (`ok:
 * false`); anything else thrown is a sandbox failure, or the memory limit when the isolate is disposed.
 */
export async function loadAgentContext(sandbox: SandboxIsolate): Promise<LoadResult> {
  sandbox.inFlight += 1;
  try {
    return await loadInto(sandbox);
  } finally {
    sandbox.inFlight -= 1;
  }
}

async function loadInto(sandbox: SandboxIsolate): Promise<LoadResult> {
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
    const binding: HostBinding = { runs: new Map(), lastToken: 0, start: undefined };
    const host = hostReferences(binding);
    const start = (await context.evalClosure(bootstrapSource, [...host, agentModule.derefInto()], {
      filename: bootstrapFileName,
      result: { reference: true },
    })) as ivm.Reference<StartRun>;
    binding.start = start;
    // Loaded for a run, which gives it back (context-pool.ts) when it ends.
    return { ok: true, agent: { sandbox, runs: 0, active: 1, closed: false, binding, start, context, host, released: false } };
  } catch (err) {
    releaseHandles(sandbox, context);
    throw err;
  }
}

/** The host's sync and async call references, answering only the runs `binding` holds. */
function hostReferences(binding: HostBinding): [ivm.Reference, ivm.Reference] {
  const hostSync = new ivm.Reference((token: unknown, op: unknown, payload: unknown, outbox: unknown) => {
    const bound = boundRun(binding, token);
    if (!bound) return haltReply();
    bound.inSyncCall = true;
    try {
      return handleSyncCall(bound.session, op, payload, outbox);
    } finally {
      bound.inSyncCall = false;
    }
  });
  // Called with applyIgnored (bootstrap/host.ts callAsync): the reply goes back through StartRun's `reply` step.
  // Call 0 is a notice that wants no reply (bootstrap/host.ts noticeReturned).
  const hostAsync = new ivm.Reference((token: unknown, op: unknown, payload: unknown, outbox: unknown, call: unknown) => {
    if (typeof call !== 'number') return;
    const bound = boundRun(binding, token);
    if (call === 0) {
      if (bound && op === 'returned') noteReturned(bound.session);
      return;
    }
    if (!bound) return sendReply(binding, call, haltReply());
    const { session, waiting } = bound;
    // The bootstrap stops at the same limit; this holds even if it did not.
    if (waiting.size >= maxPendingCalls) return sendReply(binding, call, endForTooManyPendingCalls(session));
    const answer = (reply: string) => {
      if (waiting.delete(answer)) sendReply(binding, call, reply);
    };
    waiting.add(answer);
    session.run.onWait?.();
    handleAsyncCall(session, op, payload, outbox).then(answer, (err: unknown) => answer(replyWithError(session, err)));
  });
  return [hostSync, hostAsync];
}

/** Hands the reply to async call `call` to the isolate; a context released or an isolate gone meanwhile has nobody to hear it. */
function sendReply(binding: HostBinding, call: number, reply: string): void {
  try {
    binding.start?.applyIgnored(undefined, [call, reply, 'reply']);
  } catch {
    // Released with its context, or the isolate disposed: the call's code is gone with it.
  }
}

/**
 * Whether the session's run is paused on the host now (in a sync call, or with an async one
 * unanswered) rather than computing: one that ends so unwinds as soon as its calls are answered with
 * the end. A run that ends while it computes (a stop, a deadline in a busy loop) may never give the
 * isolate back, and its context takes no more runs (context-pool.ts `discard`).
 */
export function waitsOnHost(session: Session): boolean {
  const bound = boundRuns.get(session);
  return bound !== undefined && (bound.inSyncCall || bound.waiting.size > 0);
}

/**
 * Answers the async host calls the session's run still waits on with the run's end (a sleep whose
 * timer was cleared, an ask that paused the run, a fetch whose connection closed): its code unwinds
 * (the agent sees an error it may catch, and every later call ends the same way) instead of waiting
 * forever, and the context can be given back once it has (context-pool.ts `giveAfterUnwind`).
 */
export function answerWaitingCallsWithEnd(session: Session): void {
  const bound = boundRuns.get(session);
  if (!bound) return;
  const halt = haltReply();
  for (const answer of bound.waiting) answer(halt);
}

/**
 * Runs the agent once for `session`. The session is bound until the result comes back, also after
 * the run has ended (its calls are answered with the end meanwhile). isolated-vm delivers the result
 * once the isolate's microtasks have drained, after any host call the run's leftover code made
 * meanwhile; a call still unanswered then makes the context not reusable, like one the isolate
 * itself counted.
 *
 * A run in a warm context whose isolate has nothing else under way (canEnterSynchronously) is
 * entered synchronously, on this thread (`applySync`): a run that needs nothing but sync sys calls
 * (most short runs) is over when the entry returns, with no hand-off to isolated-vm's threads and
 * back (each costs both threads a wake-up). What it reports live waits for the entry to return
 * (session.heldReports). The run is 'interrupted', nothing it reported sent, and the caller starts it
 * over in a context of its own entered the usual way, when it is still computing after `syncEntryMs`,
 * or when it ends on a stack overflow: this thread's stack is smaller than the pool's, and the run
 * must not fail here where it would not there. An overflow the agent catches itself is the one
 * difference left: it comes after ~14,000 frames here instead of ~116,000. A run still waiting on
 * the host when the entry returns goes on as any other.
 */
export async function runInAgentContext(agent: AgentContext, session: Session, { sync }: { sync: boolean }): Promise<IsolateReport | 'interrupted'> {
  agent.runs += 1;
  const token = (agent.binding.lastToken += 1);
  const bound: BoundRun = { session, waiting: new Set(), inSyncCall: false };
  agent.binding.runs.set(token, bound);
  boundRuns.set(session, bound);
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
  const configText = JSON.stringify(config);
  agent.sandbox.inFlight += 1;
  try {
    const entered = sync
      ? await enterSynchronously(agent, session, token, configText)
      : { text: String(await agent.start.apply(undefined, [token, configText], { result: { promise: true, copy: true } })), leftover: false };
    if (entered === 'interrupted') return entered;
    const result = JSON.parse(entered.text) as IsolateReport;
    if (bound.waiting.size > 0 || entered.leftover) result.reusable = false;
    return result;
  } finally {
    agent.sandbox.inFlight -= 1;
    agent.binding.runs.delete(token);
  }
}

/** How long a synchronous entry may hold the host's thread before the run is interrupted (and started over). */
export const syncEntryMs = 10;

/**
 * Whether a run may be entered synchronously into `agent` now (runInAgentContext): a warm context (a
 * run's code was over in it with nothing left pending: its code is compiled, and it did not loop from
 * the start) in an isolate where nothing can be running.
 */
export function canEnterSynchronously(agent: AgentContext): boolean {
  return agent.runs > 0 && isIsolateIdle(agent.sandbox);
}

/** The run's result text ("" for none yet, then awaited) and whether it left async host calls pending; or 'interrupted'. */
async function enterSynchronously(agent: AgentContext, session: Session, token: number, configText: string): Promise<SettledRun | 'interrupted'> {
  session.heldReports = [];
  let settled: SettledRun;
  try {
    agent.start.applySync(undefined, [token, configText, 'begin'], { timeout: syncEntryMs });
    settled = agent.start.applySync(undefined, [token, '', 'settled'], { timeout: syncEntryMs, result: { copy: true } }) as SettledRun;
  } catch (err) {
    if (isTimeout(err) && !hasEnded(session)) return interrupted(session);
    releaseReports(session);
    throw err;
  }
  if (isStackOverflow(settled.text) && !hasEnded(session)) return interrupted(session);
  releaseReports(session);
  // Still waiting on the host: it counts in `inFlight` until its result is back, so no run is entered
  // here meanwhile; if it then leaves anything behind, its context is discarded and the isolate restless.
  if (settled.text) return settled;
  const text = String(await agent.start.apply(undefined, [token, '', 'finish'], { result: { promise: true, copy: true } }));
  return { text, leftover: false };
}

function interrupted(session: Session): 'interrupted' {
  session.heldReports = undefined;
  return 'interrupted';
}

function isTimeout(err: unknown): boolean {
  return err instanceof Error && err.message === 'Script execution timed out.';
}

function isStackOverflow(resultText: string): boolean {
  if (!resultText.includes('Maximum call stack size exceeded')) return false;
  const result = JSON.parse(resultText) as IsolateReport;
  return result.kind === 'threw' && result.thrown.name === 'RangeError' && result.thrown.message.includes('Maximum call stack size exceeded');
}

/**
 * Lets go of the context: its host references answer nothing more (a later token never comes), and
 * V8 collects it once no code of it is left pending. What it left queued can still run in the
 * isolate meanwhile; context-pool.ts watches for that.
 */
export function releaseAgentContext(agent: AgentContext): void {
  if (agent.released) return;
  agent.released = true;
  agent.closed = true;
  agent.binding.runs.clear();
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

function boundRun(binding: HostBinding, token: unknown): BoundRun | undefined {
  return typeof token === 'number' ? binding.runs.get(token) : undefined;
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
