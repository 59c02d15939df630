import ivm from 'isolated-vm';
import { disposeIsolate, loadAgentIsolate, runInAgentIsolate, type AgentIsolate } from './agent-isolate.js';
import type { RunResult } from './bootstrap.js';
import { parseAllowList } from './destination-guard.js';
import { closeFetchSlots, createFetchSlots } from './fetch-slots.js';
import { AgentFault, classifyThrown, describeCopiedError, failure, limitError } from './error-codes.js';
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
      timers: new Set(),
      fetchSlots: createFetchSlots(),
      end: (ending) => {
        if (session.ended) return;
        session.ended = true;
        clearTimeout(timer);
        run.signal?.removeEventListener('abort', onStop);
        releaseIsolate(pool, session, held, ending);
        for (const sleeping of session.timers) clearTimeout(sleeping);
        closeFetchSlots(session.fetchSlots);
        resolve({ ...limitError(ending), output: session.output.parts } as SandboxOutcome);
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
  // A draft never shares warm state with a published agent (DESIGN §12): its runs load their own.
  const warm = session.run.fresh ? undefined : pool.take(session.run);
  const result = await runInIsolate(session, held, warm);
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
function releaseIsolate(pool: IsolatePool, session: Session, held: Held, ending: Ending): void {
  if (ending.resultCode === 'success' && held.agent && held.reusable && !session.run.fresh) pool.give(held.agent);
  else if (held.isolate) disposeIsolate(held.isolate);
}

function endingFromResult(session: Session, held: Held, result: RunResult): Ending {
  if (result.kind === 'threw') return classifyThrown(result.thrown);
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
 * The call into the isolate failed. If we did not end the run, a disposed isolate means V8 hit the
 * memory limit (isolated-vm disposes it then).
 */
function endingForCrash(isolate: ivm.Isolate | undefined, run: SandboxRun, err: unknown): Ending {
  if (isolate?.isDisposed) {
    return failure('errorInAgent', `memory limit exceeded: the agent used more than ${run.memoryMb} MB`);
  }
  // A promise the agent left rejected with a built-in error (writing to a frozen built-in, say)
  // surfaces here once its run has returned: still the agent's mistake.
  const thrown = describeCopiedError(err);
  if (thrown.kind === 'builtin') return classifyThrown(thrown);
  const message = err instanceof Error ? err.message : String(err);
  return failure('unexpected', `sandbox error: ${message}`);
}

function timedOut(run: SandboxRun): Ending {
  return failure('timedOut', `the agent ran longer than ${run.maxRuntimeMs} ms`);
}
