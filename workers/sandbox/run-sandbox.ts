import ivm from 'isolated-vm';
import { disposeIsolate, loadAgentIsolate, runInAgentIsolate, type AgentIsolate } from './agent-isolate.js';
import type { RunResult } from './bootstrap.js';
import { parseAllowList } from './destination-guard.js';
import { AgentFault, classifyThrown, failure } from './error-codes.js';
import { createIsolatePool, type IsolatePool } from './isolate-pool.js';
import { assertReplayFinished, createJournal } from './journal.js';
import { createOutput } from './output.js';
import type { SandboxOutcome, SandboxRun } from './sandbox.types.js';
import { hasEnded, type Ending, type Session } from './session.js';
import { readVariables } from './variables.js';
import { stopOf } from './run-stop.js';

/** The isolate a run uses, once it has one: disposed or given back as the run ends. */
interface Held {
  isolate?: ivm.Isolate;
  agent?: AgentIsolate;
  /** The isolate said the run left nothing behind (RunResult `reusable`). */
  reusable?: boolean;
}

/** The abort reason of every run's endSignal (a given reason spares building a DOMException per run). */
const runEnded = new Error('the run has ended');

/** Used when the caller passes no pool: one per process, like the isolated-vm thread pool it feeds. */
const processPool = createIsolatePool();

/**
 * Runs one agent in an isolate of its own (DESIGN §5) and reports how it ended. Never throws: every
 * way a run can end is an outcome. The run ends at the first of: the agent returns or throws,
 * sys.fail, a live sys.ask, a fault the host detects, the deadline (timedOut), or `run.signal`
 * (stopped, or mustLogin when the caller's session ended). The isolate comes warm from `pool` when an earlier run of the same code left it clean;
 * it goes back only after a clean success and is disposed on every other ending, which also stops a
 * busy loop or pending work at once.
 */
export function runSandbox(run: SandboxRun, pool: IsolatePool = processPool): Promise<SandboxOutcome> {
  // Made on first use: most runs never sleep or fetch, and an AbortController costs ~5 µs.
  let endController: AbortController | undefined;
  const held: Held = {};
  let timer: NodeJS.Timeout | undefined;
  return new Promise<SandboxOutcome>((resolve) => {
    const onStop = () => session.end({ ...stopOf(run.signal) });
    const session: Session = {
      run,
      journal: createJournal(run.journal),
      output: createOutput(),
      allow: parseAllowList(run.httpAllow),
      deadline: Date.now() + run.maxRuntimeMs,
      ended: false,
      get endSignal() {
        endController ??= new AbortController();
        if (session.ended) endController.abort(runEnded);
        return endController.signal;
      },
      end: (ending) => {
        if (session.ended) return;
        session.ended = true;
        endController?.abort(runEnded);
        clearTimeout(timer);
        run.signal?.removeEventListener('abort', onStop);
        releaseIsolate(pool, held, ending);
        resolve({ ...ending, output: session.output.parts } as SandboxOutcome);
      },
    };
    timer = setTimeout(() => session.end(timedOut(run)), run.maxRuntimeMs);
    run.signal?.addEventListener('abort', onStop, { once: true });
    if (run.signal?.aborted) onStop();
    executeAgent(pool, session, held).then(session.end, (err: unknown) => session.end(endingForCrash(held.isolate, run, err)));
  });
}

// The ending returned once the run has already ended (by stop or deadline); session.end ignores it.
const alreadyEnded: Ending = failure('stopped', 'the run was stopped');

async function executeAgent(pool: IsolatePool, session: Session, held: Held): Promise<Ending> {
  // Stopped before the start: take nothing from the pool.
  if (hasEnded(session)) return alreadyEnded;
  let result = await runInIsolate(session, held, pool.take(session.run));
  if (result.kind === 'dirty') {
    // Code the warm isolate's previous run left queued changed it; nothing of this run ran there.
    if (held.isolate) disposeIsolate(held.isolate);
    if (hasEnded(session)) return alreadyEnded;
    result = await runInIsolate(session, held, undefined);
  }
  return endingFromResult(session, held, result);
}

/** Runs the agent in `warm`, or in a fresh isolate. `held` gets the isolate before anything is awaited, so an ending can dispose it. */
async function runInIsolate(session: Session, held: Held, warm: AgentIsolate | undefined): Promise<RunResult> {
  let agent = warm;
  if (agent) held.isolate = agent.isolate;
  else {
    held.isolate = new ivm.Isolate({ memoryLimit: session.run.memoryMb });
    const loaded = await loadAgentIsolate(held.isolate, { code: session.run.code, agentName: session.run.agentName, memoryMb: session.run.memoryMb });
    if (!loaded.ok) return { kind: 'threw', thrown: loaded.thrown };
    agent = loaded.agent;
  }
  held.agent = agent;
  return runInAgentIsolate(agent, session);
}

/** Gives the isolate back after a clean success; otherwise disposes it. */
function releaseIsolate(pool: IsolatePool, held: Held, ending: Ending): void {
  if (ending.resultCode === 'success' && held.agent && held.reusable) pool.give(held.agent);
  else if (held.isolate) disposeIsolate(held.isolate);
}

function endingFromResult(session: Session, held: Held, result: RunResult): Ending {
  if (result.kind === 'threw') return classifyThrown(result.thrown);
  if (result.kind === 'dirty') return failure('unexpected', 'sandbox error: a fresh isolate was not clean');
  try {
    assertReplayFinished(session.journal);
    const variables = readVariables(result.vars, result.conv);
    held.reusable = result.reusable;
    return { resultCode: 'success', ...variables };
  } catch (err) {
    if (err instanceof AgentFault) return failure('errorInAgent', err.message);
    throw err;
  }
}

/**
 * The isolate failed from outside the agent's reach. If we did not end the run, a disposed isolate
 * means V8 hit the memory limit (isolated-vm disposes it then).
 */
function endingForCrash(isolate: ivm.Isolate | undefined, run: SandboxRun, err: unknown): Ending {
  if (isolate?.isDisposed) {
    return failure('errorInAgent', `memory limit exceeded: the agent used more than ${run.memoryMb} MB`);
  }
  const message = err instanceof Error ? err.message : String(err);
  return failure('unexpected', `sandbox error: ${message}`);
}

function timedOut(run: SandboxRun): Ending {
  return failure('timedOut', `the agent ran longer than ${run.maxRuntimeMs} ms`);
}
