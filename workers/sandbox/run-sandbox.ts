import { answerWaitingCallsWithEnd, canEnterSynchronously, loadAgentContext, runInAgentContext, syncEntryMs, waitsOnHost, type AgentContext } from './agent-context.js';
import type { IsolateReport } from './sandbox-protocol.js';
import { parseAllowList } from '../outbound-http/destination-guard.js';
import { closeFetchSlots, createFetchSlots } from '../outbound-http/fetch-slots.js';
import { createFetchStreams } from './fetch-streams.js';
import { AgentFault, limitError, maskError } from './error-codes.js';
import { createContextPool, type ContextPool } from './context-pool.js';
import { assertReplayFinished, createJournal } from './journal.js';
import { createOutput } from './output.js';
import type { InlineDecline, InlineDeclined, InlineEntry, SandboxRun } from './sandbox.types.js';
import { secretMasker } from '../../shared/agent-secrets.js';
import { makeQueuedOutput } from './host-calls.js';
import { hasEnded, type Session } from './session.js';
import { readVariables } from './variables.js';
import { endingForCrash, endingForThrown, errorInAgent, returned, stopped, timedOut, type SandboxEnding, type WithoutOutput } from './sandbox-endings.js';
import { createSandboxIsolate, isDisposed, isIsolateIdle, tenancyKeyOf, type SandboxIsolate, type TenancyKey } from './sandbox-isolate.js';
import { inlineContext } from './inline-contexts.js';
import { turnToLoad } from './load-turns.js';
import { watchRun } from './run-watch.js';
import { runTraceContext } from '../tracing/sys-call-spans.js';

/** The sandbox a run uses, once it has one: released or given back as the run ends. */
interface Held {
  sandbox?: SandboxIsolate;
  agent?: AgentContext;
  /** The isolate said the run left nothing behind (IsolateReport `reusable`). */
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
 * Runs one agent in a sandbox context (DESIGN §5), alone in it or beside other runs of the same agent
 * for the same caller (context-pool.ts `join`), and reports how it ended. Never throws: every
 * way a run can end is an ending (sandbox-endings.ts). The run ends at the first of: the agent returns or throws,
 * sys.fail, a live sys.ask, a fault the host detects, the deadline (timedOut), or `run.signal`
 * (stopped, or mustLogin when the caller's session ended). The run's context comes warm from `pool`
 * when an earlier run of the same agent for the same caller left it clean. It goes back once the
 * run's code is over with nothing of it left pending, however the run ended: a run ended while it
 * waits on the host (an ask, a stop or the deadline during a sleep or fetch, sys.fail) has the calls
 * it waits on answered with its end and unwinds first. Otherwise (a run stopped while it computes)
 * the context is released, its isolate disposed unless other runs of the caller still use it
 * (context-pool.ts stops those too if the ended run left it busy).
 */
export function runSandbox(run: SandboxRun, pool: ContextPool = processPool): Promise<SandboxEnding> {
  // With no inline entry, no run is declined.
  return startRun(run, undefined, pool) as Promise<SandboxEnding>;
}

/**
 * Runs an inline run (the web process's short runs, workers/inline-runs.ts): entered synchronously on
 * this thread whenever its isolate is idle, a warm context or not, and never started over on the pool.
 * A run that cannot be entered so now, or is still computing when the entry gives the thread back, is
 * declined (InlineDeclined, saying why), with nothing of it sent.
 */
export function runSandboxInline(run: SandboxRun, inline: InlineEntry, pool: ContextPool = processPool): Promise<SandboxEnding | InlineDeclined> {
  return startRun(run, inline, pool);
}

function startRun(run: SandboxRun, inline: InlineEntry | undefined, pool: ContextPool): Promise<SandboxEnding | InlineDeclined> {
  const held: Held = {};
  let timer: NodeJS.Timeout | undefined;
  return new Promise<SandboxEnding | InlineDeclined>((resolve) => {
    const onStop = () => session.end(stopped(run.signal));
    const session: Session = {
      run,
      inline,
      journal: createJournal(run.journal),
      output: createOutput(),
      allow: parseAllowList(run.httpAllow),
      deadline: Date.now() + run.maxRuntimeMs,
      ended: false,
      timers: new Set(),
      fetchSlots: createFetchSlots(),
      fetchStreams: createFetchStreams(),
      mask: secretMasker(run.secrets),
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
        // A run paused on an ask leaves its children running (its resume waits for them); any other end stops them.
        session.children?.abort('declined' in ending || ending.resultCode !== 'ask' ? 'stop' : 'detach');
        resolve('declined' in ending ? ending : ({ ...limitError(maskError(ending, session.mask)), output: session.output.parts } as SandboxEnding));
      },
    };
    timer = setTimeout(() => session.end(timedOut(run.maxRuntimeMs)), run.maxRuntimeMs);
    run.signal?.addEventListener('abort', onStop, { once: true });
    if (run.signal?.aborted) onStop();
    executeAgent(pool, session, held).then(
      (ending) => {
        if (ending) session.end(ending);
      },
      (err: unknown) => session.end(endingForCrash(held.sandbox, err)),
    );
  });
}

/** How the run's code ended (or was declined), or undefined when the run had ended already (stopped, or its deadline). */
type Settled = WithoutOutput<SandboxEnding> | InlineDeclined | undefined;

async function executeAgent(pool: ContextPool, session: Session, held: Held): Promise<Settled> {
  // Stopped before the start: take nothing from the pool.
  if (hasEnded(session)) return undefined;
  const key = tenancyKeyOf(session.run);
  const { inline } = session;
  if (inline) {
    // An inline run outlasted its entry a moment ago: this thread takes no more for a while (below).
    if (!pool.syncEntryOpen()) return declineInline('busy');
    const context = await inlineContext(pool, key, inline, { load: () => loadContext(pool, session, held, key), stopped: () => hasEnded(session) });
    if (context === 'busy') return declineInline('busy');
    if (context === 'stopped') return undefined;
    return 'ending' in context ? context.ending : runInline(pool, session, held, context.agent, inline);
  }
  // A draft never shares warm state with a published agent (DESIGN §12): its runs load their own.
  const shared = session.run.fresh ? undefined : await sharedContext(pool, key, () => session.run.onWait?.());
  const loaded = typeof shared === 'object' ? { agent: shared } : await loadShared(pool, session, held, key, shared);
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

/** An inline run (runSandboxInline): entered synchronously or not at all, never started over. */
async function runInline(pool: ContextPool, session: Session, held: Held, agent: AgentContext, inline: InlineEntry): Promise<Settled> {
  if (!isIsolateIdle(agent.sandbox) || !pool.syncEntryOpen()) {
    pool.give(agent);
    return declineInline('busy');
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
  if (cpuMs < syncEntryMs / 2) return declineInline('busy');
  // The agent held this thread ~syncEntryMs, and its context costs a load and a disposal: a burst of
  // such agents (each new to the admission, so each tried once) added up past 100 ms of a web
  // process's thread. As in a worker, no run is entered synchronously for a while after one.
  pool.pauseSyncEntry();
  return declineInline('long');
}

/** The inline run is not run here (nothing of it was sent): its caller is told why, and runs it elsewhere. */
function declineInline(why: InlineDecline): InlineDeclined {
  return { declined: why };
}

/**
 * A context for a run of a published agent, shared with the runs of the agent for the caller that
 * come meanwhile: an idle one first (its isolate may be idle, for a synchronous entry), then one other
 * runs use now, then the one a load under way brings (a burst of runs shares the first loads instead of
 * each making one). Otherwise the run loads one itself, announced in the same turn as the search
 * found nothing (what is returned: loadShared settles it), so the next run waits for it.
 *
 * A run that joins a load under way tells `waits` (SandboxRun `onWait`): it waits on another run's
 * load and holds no thread meanwhile, so it gives back its place among the worker's starting runs
 * (start-gate.ts) as a run waiting on the host does. Otherwise a burst of one caller's runs started a
 * context's worth (the gate's width) at a time, each context loaded only once the previous
 * one's runs had reached the host: 200 runs of a new agent, seven loads one after another (issue 49).
 */
async function sharedContext(pool: ContextPool, key: TenancyKey, waits: () => void): Promise<AgentContext | Announced> {
  for (;;) {
    const taken = pool.take(key);
    if (taken) {
      pool.share(taken);
      return taken;
    }
    const joined = pool.join(key);
    if (joined) return joined;
    const loading = pool.joinLoad(key);
    if (!loading) return pool.announceLoad(key);
    waits();
    const joinedLoad = await loading;
    if (joinedLoad) return joinedLoad;
  }
}

type Announced = ReturnType<ContextPool['announceLoad']>;

/** loadContext for a run others may join (sharedContext), settling its announcement (none for a draft's). */
async function loadShared(pool: ContextPool, session: Session, held: Held, key: TenancyKey, loaded: Announced | undefined): Promise<{ agent: AgentContext } | { ending: Settled }> {
  if (!loaded) return loadContext(pool, session, held, key);
  try {
    const result = await loadContext(pool, session, held, key);
    if ('agent' in result) pool.share(result.agent);
    loaded('agent' in result ? result.agent : undefined);
    return result;
  } catch (err) {
    loaded(undefined);
    throw err;
  }
}

/** A context loaded for the run (cold starts take turns), or how the run ended meanwhile. */
async function loadContext(pool: ContextPool, session: Session, held: Held, key: TenancyKey): Promise<{ agent: AgentContext } | { ending: Settled }> {
  // An inline run's context gets an isolate of its own: its runs are entered synchronously, never while another context loads there.
  const alone = session.run.fresh || session.inline !== undefined;
  // The load begins in its turn: the isolate counts it at once, so the next load of the turn sees it full.
  const begun = await turnToLoad(
    () => {
      if (hasEnded(session)) return undefined;
      const sandbox = session.run.fresh ? createSandboxIsolate(key) : pool.isolateFor(key, { alone });
      return { sandbox, loading: loadAgentContext(sandbox) };
    },
    () => hasEnded(session) || (!alone && pool.hasRoom(key)),
  );
  if (!begun) return { ending: undefined };
  held.sandbox = begun.sandbox;
  const loaded = await begun.loading;
  if (!loaded.ok) {
    pool.vacate(held.sandbox);
    return { ending: endingForThrown(loaded.thrown) };
  }
  return { agent: loaded.agent };
}

/** Runs the agent in `agent` (held from now on); its ending, or 'interrupted' (runInAgentContext). */
async function runInContext(pool: ContextPool, session: Session, held: Held, agent: AgentContext, sync: boolean): Promise<Settled | 'interrupted'> {
  held.sandbox = agent.sandbox;
  held.agent = agent;
  // Ended while its context loaded: no code of the run went in, and the context is as it was loaded.
  if (hasEnded(session)) {
    held.reusable = true;
    releaseSandbox(pool, session, held);
    return undefined;
  }
  held.running = true;
  // Runs that come meanwhile may join this one in its context (not a draft's: its context is its own).
  if (!session.run.fresh && !session.inline) pool.share(agent);
  held.unwatch = watchRun(session, agent);
  let result: IsolateReport | 'interrupted';
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
  } else if (held.running && waitsOnHost(session)) {
    held.unwound = pool.giveAfterUnwind(agent);
    answerWaitingCallsWithEnd(session);
  } else if (!held.running && held.reusable) {
    pool.give(agent);
  } else {
    pool.discard(agent);
  }
}

function endingFromResult(session: Session, held: Held, result: IsolateReport): WithoutOutput<SandboxEnding> {
  held.reusable = result.reusable;
  try {
    makeQueuedOutput(session, result.outbox);
  } catch (err) {
    if (err instanceof AgentFault) return errorInAgent(err);
    throw err;
  }
  if (result.kind === 'threw') return endingForThrown(result.thrown);
  try {
    assertReplayFinished(session.journal);
    return returned(readVariables(result.vars, result.conv));
  } catch (err) {
    if (err instanceof AgentFault) return errorInAgent(err);
    throw err;
  }
}
