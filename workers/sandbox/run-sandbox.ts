import { answerWaitingCallsWithEnd, canEnterSynchronously, loadAgentContext, runInAgentContext, syncEntryMs, waitsOnHost, type AgentContext } from './agent-context.js';
import type { RunResult } from './sandbox-protocol.js';
import { parseAllowList } from './destination-guard.js';
import { closeFetchSlots, createFetchSlots } from './fetch-slots.js';
import { createFetchStreams } from './streamed-fetch.js';
import { AgentFault, classifyThrown, describeCopiedError, failure, limitError } from './error-codes.js';
import { createContextPool, type ContextPool } from './context-pool.js';
import { assertReplayFinished, createJournal } from './journal.js';
import { createOutput } from './output.js';
import type { InlineDecline, InlineEntry, SandboxOutcome, SandboxRun } from './sandbox.types.js';
import { maskableValues, maskSecrets } from '../../shared/agent-secrets.js';
import { makeQueuedOutput } from './host-calls.js';
import { hasEnded, type Ending, type Session } from './session.js';
import { readVariables } from './variables.js';
import { stopOf } from './run-stop.js';
import { createSandboxIsolate, disposalReason, isDisposed, isIsolateIdle, tenancyKeyOf, type SandboxIsolate, type TenancyKey } from './sandbox-isolate.js';
import { inlineContext } from './inline-contexts.js';
import { turnToLoad } from './load-turns.js';
import { watchRun } from './run-watch.js';
import { runTraceContext } from '../tracing/sys-call-spans.js';

/** The sandbox a run uses, once it has one: released or given back as the run ends. */
interface Held {
  sandbox?: SandboxIsolate;
  agent?: AgentContext;
  /** The isolate said the run left nothing behind (RunResult `reusable`). */
  reusable?: boolean;
  /** The run's code is under way in `agent`: its result is not back yet. */
  running?: boolean;
  /** The run ended while its code was under way: called with `reusable` once the result is back. */
  unwound?: (reusable: boolean) => void;
  /** Ends the run watch's look at the run's code (run-watch.ts), once it is over or the run ended. */
  unwatch?: () => void;
}

/** Used when the caller passes no pool: one per process, like the isolated-vm thread pool it feeds. */
const processPool = createContextPool();

/**
 * Runs one agent in a sandbox context of its own (DESIGN §5) and reports how it ended. Never throws: every
 * way a run can end is an outcome. The run ends at the first of: the agent returns or throws,
 * sys.fail, a live sys.ask, a fault the host detects, the deadline (timedOut), or `run.signal`
 * (stopped, or mustLogin when the caller's session ended). The run's context comes warm from `pool`
 * when an earlier run of the same agent for the same caller left it clean. It goes back once the
 * run's code is over with nothing of it left pending, however the run ended: a run ended while it
 * waits on the host (an ask, a stop or the deadline during a sleep or fetch, sys.fail) has the calls
 * it waits on answered with its end and unwinds first. Otherwise (a run stopped while it computes)
 * the context is released, its isolate disposed unless other runs of the caller still use it
 * (context-pool.ts stops those too if the ended run left it busy).
 */
export function runSandbox(run: SandboxRun, pool: ContextPool = processPool): Promise<SandboxOutcome> {
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
      fetchStreams: createFetchStreams(),
      mask: maskerOf(run.secrets),
      traceContext: runTraceContext(),
      end: (ending) => {
        if (session.ended) return;
        session.ended = true;
        clearTimeout(timer);
        run.signal?.removeEventListener('abort', onStop);
        held.unwatch?.();
        releaseSandbox(pool, session, held);
        for (const sleeping of session.timers) clearTimeout(sleeping);
        closeFetchSlots(session.fetchSlots);
        resolve({ ...limitError(ending), output: session.output.parts } as SandboxOutcome);
      },
    };
    timer = setTimeout(() => session.end(timedOut(run)), run.maxRuntimeMs);
    run.signal?.addEventListener('abort', onStop, { once: true });
    if (run.signal?.aborted) onStop();
    executeAgent(pool, session, held).then(session.end, (err: unknown) => session.end(endingForCrash(held.sandbox, err)));
  });
}

// The ending returned once the run has already ended (by stop or deadline); session.end ignores it.
const alreadyEnded: Ending = failure('stopped', 'the run was stopped');

async function executeAgent(pool: ContextPool, session: Session, held: Held): Promise<Ending> {
  // Stopped before the start: take nothing from the pool.
  if (hasEnded(session)) return alreadyEnded;
  const key = tenancyKeyOf(session.run);
  const { inline } = session.run;
  if (inline) {
    // An inline run outlasted its entry a moment ago: this thread takes no more for a while (below).
    if (!pool.syncEntryOpen()) return declineInline(inline, 'busy');
    const context = await inlineContext(pool, key, inline, { load: () => loadContext(pool, session, held, key), stopped: () => hasEnded(session) });
    if (context === 'busy') return declineInline(inline, 'busy');
    if (context === 'stopped') return alreadyEnded;
    return 'ending' in context ? context.ending : runInline(pool, session, held, context.agent, inline);
  }
  // A draft never shares warm state with a published agent (DESIGN §12): its runs load their own.
  const warm = session.run.fresh ? undefined : pool.take(key);
  const loaded = warm ? { agent: warm } : await loadContext(pool, session, held, key);
  if ('ending' in loaded) return loaded.ending;
  const { agent } = loaded;
  // A draft's runs (traced, in an isolate of their own) are always entered the usual way.
  const result = await runInContext(pool, session, held, agent, !session.run.fresh && pool.syncEntryOpen() && canEnterSynchronously(agent));
  if (result !== 'interrupted') return result;
  // Still computing when the synchronous entry had to give the thread back (or overflowed its stack):
  // nothing of it went out. It starts over in a new context (its isolate is entered synchronously no more).
  pool.pauseSyncEntry();
  pool.discard(agent);
  held.agent = undefined;
  session.output = createOutput();
  session.journal = createJournal(session.run.journal);
  const again = await loadContext(pool, session, held, key);
  if ('ending' in again) return again.ending;
  const retried = await runInContext(pool, session, held, again.agent, false);
  if (retried === 'interrupted') throw new Error('a run entered the usual way was interrupted');
  return retried;
}

/** An inline run (SandboxRun `inline`): entered synchronously or not at all, never started over. */
async function runInline(pool: ContextPool, session: Session, held: Held, agent: AgentContext, inline: InlineEntry): Promise<Ending> {
  if (!isIsolateIdle(agent.sandbox) || !pool.syncEntryOpen()) {
    pool.give(agent);
    return declineInline(inline, 'busy');
  }
  const warm = agent.runs > 0;
  const cpuBefore = agent.sandbox.isolate.cpuTime;
  const result = await runInContext(pool, session, held, agent, true);
  // The isolate's CPU time the entry took; a disposed isolate keeps no clock, and counts as the whole allowance.
  const disposed = isDisposed(agent.sandbox);
  const cpuMs = disposed ? syncEntryMs : Number(agent.sandbox.isolate.cpuTime - cpuBefore) / 1e6;
  if (result !== 'interrupted') {
    if (warm && !disposed) inline.entered(cpuMs);
    return result;
  }
  // Interrupted with little of its time on the CPU: the thread was preempted (a busy machine), not the agent's doing.
  pool.discard(agent);
  held.agent = undefined;
  if (cpuMs < syncEntryMs / 2) return declineInline(inline, 'busy');
  // The agent held this thread ~syncEntryMs, and its context costs a load and a disposal: a burst of
  // such agents (each new to the admission, so each tried once) added up past 100 ms of a web
  // process's thread. As in a worker, no run is entered synchronously for a while after one.
  pool.pauseSyncEntry();
  return declineInline(inline, 'long');
}

function declineInline(inline: InlineEntry, why: InlineDecline): Ending {
  inline.declined(why);
  return failure('stopped', why === 'busy' ? 'the run could not be entered synchronously' : 'the run outlasted its synchronous entry');
}

/** A context loaded for the run (cold starts take turns), or how the run ended meanwhile. */
async function loadContext(pool: ContextPool, session: Session, held: Held, key: TenancyKey): Promise<{ agent: AgentContext } | { ending: Ending }> {
  await turnToLoad();
  if (hasEnded(session)) return { ending: alreadyEnded };
  // An inline run's context gets an isolate of its own: its runs are entered synchronously, never while another context loads there.
  held.sandbox = session.run.fresh ? createSandboxIsolate(key) : pool.isolateFor(key, { alone: session.run.inline !== undefined });
  const loaded = await loadAgentContext(held.sandbox);
  if (!loaded.ok) {
    pool.vacate(held.sandbox);
    return { ending: classifyThrown(loaded.thrown) };
  }
  return { agent: loaded.agent };
}

/** Runs the agent in `agent` (held from now on); its ending, or 'interrupted' (runInAgentContext). */
async function runInContext(pool: ContextPool, session: Session, held: Held, agent: AgentContext, sync: boolean): Promise<Ending | 'interrupted'> {
  held.sandbox = agent.sandbox;
  held.agent = agent;
  // Ended while its context loaded: no code of the run went in, and the context is as it was loaded.
  if (hasEnded(session)) {
    held.reusable = true;
    releaseSandbox(pool, session, held);
    return alreadyEnded;
  }
  held.running = true;
  held.unwatch = watchRun(session, agent);
  let result: RunResult | 'interrupted';
  try {
    result = await runInAgentContext(agent, session, { sync });
  } catch (err) {
    held.running = false;
    held.unwatch();
    held.unwound?.(false);
    throw err;
  }
  held.running = false;
  held.unwatch();
  if (result === 'interrupted') return result;
  held.unwound?.(result.reusable);
  return endingFromResult(session, held, result);
}

/**
 * Gives the context back when the run's code is over and left nothing pending, whatever the ending;
 * waits for that when the run ended while its code waited on the host; otherwise (it was computing,
 * or left something pending) lets it go, and its isolate if alone. A draft's context never goes back.
 */
function releaseSandbox(pool: ContextPool, session: Session, held: Held): void {
  const { agent } = held;
  if (!agent) {
    if (held.sandbox) pool.vacate(held.sandbox);
  } else if (session.run.fresh) {
    pool.discard(agent);
  } else if (held.running && waitsOnHost(agent)) {
    held.unwound = pool.giveAfterUnwind(agent);
    answerWaitingCallsWithEnd(agent);
  } else if (!held.running && held.reusable) {
    pool.give(agent);
  } else {
    pool.discard(agent);
  }
}

function endingFromResult(session: Session, held: Held, result: RunResult): Ending {
  held.reusable = result.reusable;
  try {
    makeQueuedOutput(session, result.outbox);
  } catch (err) {
    if (err instanceof AgentFault) return failure('errorInAgent', err.message);
    throw err;
  }
  if (result.kind === 'threw') return classifyThrown(result.thrown);
  try {
    assertReplayFinished(session.journal);
    const variables = readVariables(result.vars, result.conv);
    return { resultCode: 'success', ...variables };
  } catch (err) {
    if (err instanceof AgentFault) return failure('errorInAgent', err.message);
    throw err;
  }
}

/**
 * The call into the isolate failed. If we did not end the run, a disposed isolate means V8 hit the
 * memory limit (isolated-vm disposes it then), or the pool stopped an isolate a run left busy.
 */
function endingForCrash(sandbox: SandboxIsolate | undefined, err: unknown): Ending {
  if (sandbox?.isolate.isDisposed) return failure('errorInAgent', disposalReason(sandbox));
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

function maskerOf(secrets: SandboxRun['secrets']): (text: string) => string {
  const values = secrets ? maskableValues(secrets) : [];
  return values.length ? (text) => maskSecrets(text, values) : (text) => text;
}
