import ivm from 'isolated-vm';
import { agentModuleGlobal } from '../../shared/compile-agent.js';
import { bootstrapFileName, bootstrapSource, type BootstrapConfig } from './bootstrap.js';
import { parseAllowList } from './destination-guard.js';
import { AgentFault, agentFileName, classifyThrown, describeCopiedError, failure, type ThrownDescription } from './error-codes.js';
import { handleAsyncCall, handleSyncCall } from './host-calls.js';
import { assertReplayFinished, createJournal } from './journal.js';
import { createOutput } from './output.js';
import type { SandboxOutcome, SandboxRun } from './sandbox.types.js';
import type { Ending, Session } from './session.js';
import { readVariables } from './variables.js';

/** What the bootstrap's `start` returns (as JSON). */
type StartResult = { ok: true; vars: string; conv: string } | { ok: false; thrown: ThrownDescription };

/**
 * Runs one agent in a fresh isolate (DESIGN §5) and reports how it ended. Never throws: every way a
 * run can end is an outcome. The run ends at the first of: the agent returns or throws, sys.fail,
 * a live sys.ask, a fault the host detects, the deadline (timedOut), or `run.signal` (stopped).
 * The isolate is disposed as the run ends, which also stops a busy loop at once.
 */
export function runSandbox(run: SandboxRun): Promise<SandboxOutcome> {
  const isolate = new ivm.Isolate({ memoryLimit: run.memoryMb });
  const ended = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  return new Promise<SandboxOutcome>((resolve) => {
    const onStop = () => session.end(failure('stopped', 'the run was stopped'));
    const session: Session = {
      run,
      journal: createJournal(run.journal),
      output: createOutput(),
      allow: parseAllowList(run.httpAllow),
      deadline: Date.now() + run.maxRuntimeMs,
      endSignal: ended.signal,
      end: (ending) => {
        if (ended.signal.aborted) return;
        ended.abort();
        clearTimeout(timer);
        run.signal?.removeEventListener('abort', onStop);
        disposeIsolate(isolate);
        resolve({ ...ending, output: session.output.parts } as SandboxOutcome);
      },
    };
    timer = setTimeout(() => session.end(timedOut(run)), run.maxRuntimeMs);
    run.signal?.addEventListener('abort', onStop, { once: true });
    if (run.signal?.aborted) onStop();
    executeAgent(isolate, session).then(session.end, (err: unknown) => session.end(endingForCrash(isolate, run, err)));
  });
}

async function executeAgent(isolate: ivm.Isolate, session: Session): Promise<Ending> {
  const context = await isolate.createContext();
  const start = await installSys(context, session);
  try {
    const script = await isolate.compileScript(session.run.code, { filename: agentFileName });
    await script.run(context);
  } catch (err) {
    if (isolate.isDisposed) throw err;
    return classifyThrown(describeCopiedError(err));
  }
  const resultText: unknown = await start.apply(undefined, [], { result: { promise: true, copy: true } });
  return endingFromResult(session, JSON.parse(String(resultText)) as StartResult);
}

/** Evaluates the bootstrap; returns the reference to its `start` function. */
async function installSys(context: ivm.Context, session: Session): Promise<ivm.Reference<() => Promise<string>>> {
  const run = session.run;
  const config: BootstrapConfig = {
    agentName: run.agentName,
    convid: run.convid,
    inputs: run.inputs,
    caller: { kind: run.caller.kind, id: run.caller.id, role: run.caller.role },
    history: run.history,
    vars: run.vars,
    conv: run.conv,
    randomSeed: run.randomSeed,
    moduleGlobal: agentModuleGlobal,
  };
  const hostSync = new ivm.Reference((op: unknown, payload: unknown) => handleSyncCall(session, op, payload));
  const hostAsync = new ivm.Reference((op: unknown, payload: unknown) => handleAsyncCall(session, op, payload));
  const start: unknown = await context.evalClosure(bootstrapSource, [hostSync, hostAsync, JSON.stringify(config)], {
    filename: bootstrapFileName,
    result: { reference: true },
  });
  return start as ivm.Reference<() => Promise<string>>;
}

function endingFromResult(session: Session, result: StartResult): Ending {
  if (!result.ok) return classifyThrown(result.thrown);
  try {
    assertReplayFinished(session.journal);
    return { resultCode: 'success', ...readVariables(result.vars, result.conv) };
  } catch (err) {
    if (err instanceof AgentFault) return failure('errorInAgent', err.message);
    throw err;
  }
}

/**
 * The isolate failed from outside the agent's reach. If we did not end the run, a disposed isolate
 * means V8 hit the memory limit (isolated-vm disposes it then).
 */
function endingForCrash(isolate: ivm.Isolate, run: SandboxRun, err: unknown): Ending {
  if (isolate.isDisposed) {
    return failure('errorInAgent', `memory limit exceeded: the agent used more than ${run.memoryMb} MB`);
  }
  const message = err instanceof Error ? err.message : String(err);
  return failure('unexpected', `sandbox error: ${message}`);
}

function timedOut(run: SandboxRun): Ending {
  return failure('timedOut', `the agent ran longer than ${run.maxRuntimeMs} ms`);
}

function disposeIsolate(isolate: ivm.Isolate): void {
  try {
    if (!isolate.isDisposed) isolate.dispose();
  } catch {
    // Already disposed by isolated-vm (memory limit) between the check and the call.
  }
}
