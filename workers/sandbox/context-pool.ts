import type ivm from 'isolated-vm';
import { releaseAgentContext, type AgentContext } from './agent-context.js';
import { createSandboxIsolate, disposeSandboxIsolate, heapLimitMb, isDisposed, isIsolateIdle, isolateCpuTime, type SandboxIsolate, type TenancyKey } from './sandbox-isolate.js';

export interface ContextPoolOptions {
  /** Idle contexts kept in total, over all agents and callers; the least recently used goes first. 0 turns reuse off. */
  maxIdle: number;
  /**
   * Runs after which a context is retired, so slow leaks (V8 caches) stay bounded; the heap check
   * (heapSealShare) catches fast ones. Each retirement costs a new context (for a web process's short
   * runs a new isolate too, 1.5–4.5 ms on its thread) and cold code for its first runs: at 500, about
   * a fifth of what a warm hello run cost.
   */
  maxRunsPerContext: number;
  /**
   * Contexts one isolate holds at most, idle or running (fewer when runsPerIsolate ÷ runsPerContext
   * is less). Each isolate costs ~1.7 MB of RSS beside its contexts (~0.3 MB each).
   */
  contextsPerIsolate: number;
  /**
   * Runs one context serves at once (`join`): a run waiting on the host needs no context of its own,
   * so runs of one caller's agent go together instead of each loading one (~4 ms of CPU and ~0.3 MB).
   */
  runsPerContext: number;
  /**
   * Runs in one isolate at once, over its contexts (it takes runsPerIsolate ÷ runsPerContext of them,
   * and no more than contextsPerIsolate): they share its heap limit (AGENT_MEMORY_MB) and its thread
   * (one run computes at a time), so a caller's runs past this spread over more isolates. Each
   * isolate's ~1.7 MB of RSS is shared by up to this many waiting runs.
   */
  runsPerIsolate: number;
  /**
   * Contexts one isolate loads over its life. Past it the isolate takes no new ones and is disposed
   * once its last context goes, which also frees what the runs that ended unclean left in it.
   */
  contextsPerIsolateLifetime: number;
  /** An isolate still busy this long after one of its runs ended is disposed (DESIGN §12). */
  busyAfterEndMs: number;
  /**
   * After a run entered synchronously was interrupted (agent-context.ts), no run is entered so for
   * this long: a caller whose runs compute on purpose holds the thread a few ms a second at most.
   */
  syncPauseMs: number;
}

export interface ContextPoolStats {
  /** Runs that got a warm context. */
  hits: number;
  /** Runs that found no idle one (they joined one, or loaded a new one). */
  misses: number;
  /** Runs that joined a context other runs were using (ContextPool `join`). */
  joins: number;
  /** Warm contexts waiting now. */
  idle: number;
  /** Given back but released: too many runs, or their isolate sealed (too many contexts loaded, or its heap too full). */
  retired: number;
  /** Released to stay within maxIdle. */
  evicted: number;
  /** Isolates alive now, shared or not. */
  isolates: number;
  /** Runs entered synchronously, interrupted, and started over (agent-context.ts). */
  restarts: number;
}

/**
 * Where runs get their sandbox. Runs of one agent for one caller share contexts, up to
 * `runsPerContext` at once in one (`join`), and isolates, up to `runsPerIsolate`; runs of two callers
 * never share one. A context goes back to the pool once its runs' code is over with nothing left
 * pending, however they ended (run-sandbox.ts); a run that ended otherwise closes it, and it is
 * released once its last run ended, its isolate disposed when nothing else runs there. A shared
 * isolate that stays busy after a run ended (a loop the run left behind) is disposed after
 * `busyAfterEndMs`, ending the caller's other runs in it.
 */
export interface ContextPool {
  /** A warm context loaded for this key with no run in it, or undefined (try `join`, or load one into `isolateFor`). */
  take(key: TenancyKey): AgentContext | undefined;
  /**
   * A context of this key that runs in progress use and that takes one more (runsPerContext,
   * runsPerIsolate), or undefined. The run is entered the usual way: its isolate is not idle.
   */
  join(key: TenancyKey): AgentContext | undefined;
  /** Other runs may join the run in this context (one entered the usual way, not a draft's or an inline run's). */
  share(agent: AgentContext): void;
  /**
   * A context for this key is about to be loaded for a run that others may join: runs that find
   * nothing to take or join meanwhile wait for it (`joinLoad`) instead of each loading one. Call what
   * is returned with the context once loaded (before its run is entered), or undefined if none was.
   */
  announceLoad(key: TenancyKey): (loaded: AgentContext | undefined) => void;
  /**
   * Joins the context an announced load of this key brings, once loaded, if it has room for one more
   * (undefined: the load failed or the context is full by then); undefined at once when no load of
   * the key under way has room.
   */
  joinLoad(key: TenancyKey): Promise<AgentContext | undefined> | undefined;
  /**
   * The isolate a new context for this key goes into: one of the caller's with room, or a new one;
   * `alone`: always a new one (loading into an isolate keeps it busy, and a run entered synchronously
   * must never wait for that).
   */
  isolateFor(key: TenancyKey, options?: { alone?: boolean }): SandboxIsolate;
  /** Whether `isolateFor` would now answer an isolate already made (a load that makes none holds the main thread little). */
  hasRoom(key: TenancyKey): boolean;
  /** Whether a load or run is under way in an isolate of this key, or a load for it is about to start (expectLoad). */
  busy(key: TenancyKey): boolean;
  /** A load for this key is about to start (it waits its turn first); call what is returned once it is over. */
  expectLoad(key: TenancyKey): () => void;
  /** Whether the context retires within a few runs, and no other is idle for its key to take over. */
  lastBeforeRetiring(agent: AgentContext): boolean;
  /** Resolves when a context for this key is next given back (or after `ms`). */
  nextGiven(key: TenancyKey, ms: number): Promise<void>;
  /** A run in the context ended clean: it keeps serving (or waits idle), unless it is due to retire. */
  give(agent: AgentContext): void;
  /** A run in the context ended any other way: it takes no more runs, and goes once the others in it ended. */
  discard(agent: AgentContext): void;
  /**
   * The run in `agent` ended while its code waited on the host (its calls are answered with the end):
   * call the function returned with whether it then unwound clean (IsolateReport `reusable`) to give the
   * context back or let it go. Not called within `busyAfterEndMs`, the context is let go; an isolate
   * that stays busy that long is disposed, as for `discard`.
   */
  giveAfterUnwind(agent: AgentContext): (reusable: boolean) => void;
  /**
   * The isolate takes no new contexts and lets its idle ones go; it is disposed when its last one
   * goes (one that can no longer be entered synchronously, for the web process's short runs).
   */
  retire(sandbox: SandboxIsolate): void;
  /** Disposes the isolate if nothing is loaded in it (a context that failed to load, a run ended while loading). */
  vacate(sandbox: SandboxIsolate): void;
  stats(): ContextPoolStats;
  /** Whether runs may be entered synchronously now (not paused by an interruption). */
  syncEntryOpen(): boolean;
  /** A run entered synchronously was interrupted (and starts over): none is for `syncPauseMs`. */
  pauseSyncEntry(): void;
  /** Disposes every isolate the pool knows (shutdown, tests). */
  clear(): void;
}

export const defaultPoolOptions: ContextPoolOptions = {
  maxIdle: 256,
  maxRunsPerContext: 5000,
  contextsPerIsolate: 8,
  runsPerContext: 32,
  runsPerIsolate: 64,
  contextsPerIsolateLifetime: 256,
  busyAfterEndMs: 1000,
  syncPauseMs: 1000,
};

/** A context this many runs from retiring is about to (ContextPool.lastBeforeRetiring). */
const retiringRuns = 100;

/** Garbage is collected between runs; live heap past this share of the limit stops new contexts in the isolate. */
const heapSealShare = 0.5;
/** Heap statistics are read every few runs of a context: often enough to seal an isolate in time. */
const heapCheckEvery = 8;

/** Bookkeeping the pool keeps per isolate. */
interface Tenancy {
  sandbox: SandboxIsolate;
  /** Contexts loaded into it so far. */
  loaded: number;
  /** Takes no new contexts; disposed when its last one goes. */
  sealed: boolean;
  /** A busy check is under way. */
  watching: boolean;
  /**
   * Runs ended while their code was under way and not unwound yet (giveAfterUnwind). Meanwhile no run
   * is started in the isolate: it may be busy with what one of them left running.
   */
  unwinding: number;
}

export function createContextPool(options: Partial<ContextPoolOptions> = {}): ContextPool {
  const settings = { ...defaultPoolOptions, ...options };
  // Each context may fill up with runs, so an isolate takes no more contexts than its runs fill.
  const contextsPerIsolate = Math.max(1, Math.min(settings.contextsPerIsolate, Math.floor(settings.runsPerIsolate / settings.runsPerContext)));
  // No warm contexts kept (maxIdle 0): each run loads its own; none joins another's, nor waits for another's load.
  const sharesContexts = settings.maxIdle > 0;
  const idle = new KeyedLists<AgentContext>();
  // Every idle context, least recently used first (a Set keeps insertion order).
  const idleOrder = new Set<AgentContext>();
  // Contexts with runs in them that take more (join), by key and as a set.
  const joinable = new KeyedLists<AgentContext>();
  const joinableNow = new Set<AgentContext>();
  // Contexts shared (share) since they were last idle: they take runs again once one of theirs ends.
  const sharing = new WeakSet<AgentContext>();
  // Loads announced and not over, with the runs waiting to join what each brings.
  const announced = new KeyedLists<{ loaded: Promise<AgentContext | undefined>; joiners: number }>();
  const open = new KeyedLists<Tenancy>();
  const tenancies = new Map<SandboxIsolate, Tenancy>();
  const counts = { hits: 0, misses: 0, joins: 0, retired: 0, evicted: 0, restarts: 0 };
  // Who waits for a context of a key to be given back (nextGiven).
  const waiters = new KeyedLists<() => void>();
  // Loads asked for and not over yet (expectLoad).
  const expected = new KeyedLists<symbol>();
  let syncPausedUntil = 0;

  function tenancyOf(sandbox: SandboxIsolate): Tenancy | undefined {
    return tenancies.get(sandbox);
  }

  function forget(agent: AgentContext): void {
    idleOrder.delete(agent);
    idle.remove(agent.sandbox.key, agent);
  }

  /** The context goes; so does its isolate once nothing is left in it and it takes nothing more. */
  function release(agent: AgentContext): void {
    releaseAgentContext(agent);
    vacate(agent.sandbox);
  }

  /** The context takes no new run; it is released when its last one ends. */
  function close(agent: AgentContext): void {
    agent.closed = true;
    unlist(agent);
  }

  function list(agent: AgentContext): void {
    if (joinableNow.has(agent) || !mayJoin(agent)) return;
    joinableNow.add(agent);
    joinable.add(agent.sandbox.key, agent);
  }

  function unlist(agent: AgentContext): void {
    if (!joinableNow.delete(agent)) return;
    joinable.remove(agent.sandbox.key, agent);
  }

  function mayJoin(agent: AgentContext): boolean {
    const tenancy = tenancyOf(agent.sandbox);
    return (
      sharesContexts &&
      !agent.closed &&
      agent.active < settings.runsPerContext &&
      agent.runs < settings.maxRunsPerContext &&
      tenancy !== undefined &&
      !tenancy.sealed &&
      tenancy.unwinding === 0 &&
      !isDisposed(agent.sandbox)
    );
  }

  function vacate(sandbox: SandboxIsolate): void {
    if (sandbox.contexts > 0 && !isDisposed(sandbox)) return;
    disposeSandboxIsolate(sandbox, 'the sandbox was closed');
    const tenancy = tenancyOf(sandbox);
    if (!tenancy) return;
    tenancies.delete(sandbox);
    open.remove(sandbox.key, tenancy);
  }

  function seal(tenancy: Tenancy): void {
    if (tenancy.sealed) return;
    tenancy.sealed = true;
    open.remove(tenancy.sandbox.key, tenancy);
  }

  function isUnwinding(sandbox: SandboxIsolate): boolean {
    return (tenancyOf(sandbox)?.unwinding ?? 0) > 0;
  }

  function take(key: TenancyKey): AgentContext | undefined {
    for (let agent = lastReady(key); agent; agent = lastReady(key)) {
      forget(agent);
      if (isDisposed(agent.sandbox)) {
        release(agent);
        continue;
      }
      counts.hits += 1;
      agent.active = 1;
      return agent;
    }
    counts.misses += 1;
    return undefined;
  }

  function join(key: TenancyKey): AgentContext | undefined {
    const list = joinable.get(key);
    if (!list) return undefined;
    // The most recently joined first: runs gather in as few contexts as they fill.
    for (let i = list.length - 1; i >= 0; i--) {
      const agent = list[i]!;
      if (!mayJoin(agent)) continue;
      enter(agent);
      return agent;
    }
    return undefined;
  }

  /**
   * One more run in a context others use. Runs that wait long end seldom, so their isolate's heap is
   * read as runs join too (every few), not only as they end: a caller's runs that grow stop gathering
   * in an isolate past half its limit.
   */
  function enter(agent: AgentContext): void {
    agent.active += 1;
    counts.joins += 1;
    if (agent.active >= settings.runsPerContext) unlist(agent);
    const tenancy = tenancyOf(agent.sandbox);
    if (tenancy && counts.joins % heapCheckEvery === 0) checkHeap(tenancy);
  }

  function share(agent: AgentContext): void {
    sharing.add(agent);
    list(agent);
  }

  function announceLoad(key: TenancyKey): (loaded: AgentContext | undefined) => void {
    let settle!: (loaded: AgentContext | undefined) => void;
    const load = { loaded: new Promise<AgentContext | undefined>((resolve) => (settle = resolve)), joiners: 0 };
    announced.add(key, load);
    return (agent) => {
      announced.remove(key, load);
      settle(agent);
    };
  }

  function joinLoad(key: TenancyKey): Promise<AgentContext | undefined> | undefined {
    if (!sharesContexts) return undefined;
    // The loading run is the context's first; its joiners fill the rest.
    const load = announced.get(key)?.find((each) => each.joiners < settings.runsPerContext - 1);
    if (!load) return undefined;
    load.joiners += 1;
    return load.loaded.then((agent) => {
      // Its run ended while it loaded (the context went idle: `take` has it), or it is full or closed.
      if (!agent || agent.active === 0 || !mayJoin(agent)) return undefined;
      enter(agent);
      return agent;
    });
  }

  /** The most recently used idle context for the key whose isolate has no run unwinding. */
  function lastReady(key: TenancyKey): AgentContext | undefined {
    const list = idle.get(key) ?? [];
    for (let i = list.length - 1; i >= 0; i--) if (!isUnwinding(list[i]!.sandbox)) return list[i];
    return undefined;
  }

  function withRoom(key: TenancyKey): Tenancy | undefined {
    for (const tenancy of open.get(key) ?? []) {
      if (isDisposed(tenancy.sandbox) || tenancy.unwinding > 0) continue;
      if (tenancy.sandbox.contexts < contextsPerIsolate) return tenancy;
    }
    return undefined;
  }

  function isolateFor(key: TenancyKey, { alone = false }: { alone?: boolean } = {}): SandboxIsolate {
    const roomy = alone ? undefined : withRoom(key);
    if (roomy) return load(roomy);
    const sandbox = createSandboxIsolate(key);
    const tenancy: Tenancy = { sandbox, loaded: 0, sealed: false, watching: false, unwinding: 0 };
    tenancies.set(sandbox, tenancy);
    open.add(key, tenancy);
    return load(tenancy);
  }

  function load(tenancy: Tenancy): SandboxIsolate {
    tenancy.loaded += 1;
    if (tenancy.loaded >= settings.contextsPerIsolateLifetime) seal(tenancy);
    return tenancy.sandbox;
  }

  function give(agent: AgentContext): void {
    agent.active -= 1;
    const tenancy = tenancyOf(agent.sandbox);
    // A sealed isolate keeps no idle context, so it empties and goes as its runs end.
    if (agent.closed || !tenancy || tenancy.sealed || isDisposed(agent.sandbox) || agent.runs >= settings.maxRunsPerContext || settings.maxIdle === 0) {
      close(agent);
      if (agent.active > 0) return;
      counts.retired += 1;
      release(agent);
      return;
    }
    if (agent.active > 0) {
      // Room again for a run to join.
      if (sharing.has(agent)) list(agent);
      if (agent.runs % heapCheckEvery === 1) checkHeap(tenancy);
      return;
    }
    unlist(agent);
    sharing.delete(agent);
    idle.add(agent.sandbox.key, agent);
    idleOrder.add(agent);
    for (const wake of [...(waiters.get(agent.sandbox.key) ?? [])]) wake();
    for (const oldest of idleOrder) {
      if (idleOrder.size <= settings.maxIdle) break;
      forget(oldest);
      counts.evicted += 1;
      release(oldest);
    }
    // Once the context is idle: a check that seals the isolate lets it go with the others.
    if (agent.runs % heapCheckEvery === 1) checkHeap(tenancy);
  }

  /**
   * Past half its heap limit an isolate takes no new contexts and lets its idle ones go. The
   * statistics are read on this thread when nothing can be running in the isolate (36 µs of it);
   * otherwise they are asked for without waiting on the isolate, which hands the read to isolated-vm's
   * threads and back (151 µs of this thread; 3.8 % of the worker's busy time at 64 clients on new
   * conversations, when every read went that way).
   */
  function checkHeap(tenancy: Tenancy): void {
    const { sandbox } = tenancy;
    if (isIsolateIdle(sandbox)) {
      let heap: ivm.HeapStatistics;
      try {
        heap = sandbox.isolate.getHeapStatisticsSync();
      } catch {
        return; // The isolate went away meanwhile, as the asked-for read below may find too.
      }
      return sealIfFull(tenancy, heap);
    }
    sandbox.isolate.getHeapStatistics().then((heap) => sealIfFull(tenancy, heap), () => {});
  }

  function sealIfFull(tenancy: Tenancy, heap: ivm.HeapStatistics): void {
    const used = heap.used_heap_size + heap.externally_allocated_size;
    if (used <= heapLimitMb(tenancy.sandbox.key.memoryMb) * 1024 * 1024 * heapSealShare) return;
    retire(tenancy);
  }

  function retire(tenancy: Tenancy): void {
    const { sandbox } = tenancy;
    seal(tenancy);
    for (const agent of idle.get(sandbox.key)?.filter((each) => each.sandbox === sandbox) ?? []) {
      forget(agent);
      counts.retired += 1;
      release(agent);
    }
    // Those with runs in them go as their last run ends (give).
    for (const agent of joinable.get(sandbox.key)?.filter((each) => each.sandbox === sandbox) ?? []) close(agent);
  }

  function discard(agent: AgentContext): void {
    forget(agent);
    close(agent);
    agent.active -= 1;
    // It may have left code to run in its isolate: the host's thread never waits on that isolate.
    agent.sandbox.restless = true;
    // The other runs in it go on (their host calls are answered); it goes with the last of them.
    if (agent.active <= 0) releaseAgentContext(agent);
    const tenancy = tenancyOf(agent.sandbox);
    if (!tenancy || agent.sandbox.contexts === 0) {
      vacate(agent.sandbox);
      return;
    }
    watchBusy(tenancy);
  }

  function giveAfterUnwind(agent: AgentContext): (reusable: boolean) => void {
    const tenancy = tenancyOf(agent.sandbox);
    if (tenancy) {
      tenancy.unwinding += 1;
      watchBusy(tenancy);
    }
    let pending = true;
    const settle = (reusable: boolean) => {
      if (!pending) return;
      pending = false;
      clearTimeout(timer);
      if (tenancy) tenancy.unwinding -= 1;
      if (reusable) give(agent);
      else discard(agent);
    };
    const timer = setTimeout(() => settle(false), settings.busyAfterEndMs);
    return settle;
  }

  /**
   * A run that ended unclean may have left code running in the isolate its caller's other runs
   * share: if the isolate does not take a trivial task within `busyAfterEndMs` while it computed for
   * at least half that time, it is disposed. An isolate that did not compute meanwhile was not busy
   * but waiting for a core (its thread is niced, and a loaded machine can starve it for seconds):
   * it is watched for another `busyAfterEndMs` instead of ending its caller's runs for the machine.
   */
  function watchBusy(tenancy: Tenancy): void {
    if (tenancy.watching) return;
    tenancy.watching = true;
    const { sandbox } = tenancy;
    let timer: NodeJS.Timeout;
    const arm = () => {
      const cpuBefore = isolateCpuTime(sandbox);
      timer = setTimeout(() => {
        const cpuNow = isolateCpuTime(sandbox);
        const computedMs = cpuBefore === undefined || cpuNow === undefined ? Number.POSITIVE_INFINITY : Number(cpuNow - cpuBefore) / 1e6;
        if (computedMs < settings.busyAfterEndMs / 2) return arm();
        disposeSandboxIsolate(sandbox, `the sandbox was stopped: a run of agent ${sandbox.key.agentName} for this caller kept it busy for ${settings.busyAfterEndMs} ms after it ended`);
        vacate(sandbox);
      }, settings.busyAfterEndMs);
    };
    arm();
    sandbox.isolate
      .compileScript('0')
      .then((script) => script.release(), () => {})
      .finally(() => {
        clearTimeout(timer);
        tenancy.watching = false;
      });
  }

  function clear(): void {
    for (const agent of idleOrder) releaseAgentContext(agent);
    idleOrder.clear();
    idle.clear();
    joinable.clear();
    joinableNow.clear();
    for (const sandbox of tenancies.keys()) disposeSandboxIsolate(sandbox, 'the sandbox was closed');
    tenancies.clear();
    open.clear();
  }

  return {
    take,
    join,
    share,
    announceLoad,
    joinLoad,
    isolateFor,
    hasRoom: (key) => withRoom(key) !== undefined,
    busy: (key) => (expected.get(key)?.length ?? 0) > 0 || (open.get(key) ?? []).some((tenancy) => tenancy.sandbox.inFlight > 0),
    expectLoad: (key) => {
      const load = Symbol('load');
      expected.add(key, load);
      return () => expected.remove(key, load);
    },
    nextGiven: (key, ms) =>
      new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          waiters.remove(key, wake);
          resolve();
        };
        const timer = setTimeout(wake, ms);
        waiters.add(key, wake);
      }),
    lastBeforeRetiring: (agent) => agent.runs >= settings.maxRunsPerContext - retiringRuns && !idle.get(agent.sandbox.key)?.length,
    give,
    discard,
    giveAfterUnwind,
    retire: (sandbox) => {
      const tenancy = tenancyOf(sandbox);
      if (tenancy) retire(tenancy);
    },
    vacate,
    clear,
    syncEntryOpen: () => Date.now() >= syncPausedUntil,
    pauseSyncEntry: () => {
      counts.restarts += 1;
      syncPausedUntil = Date.now() + settings.syncPauseMs;
    },
    stats: () => ({ ...counts, idle: idleOrder.size, isolates: tenancies.size }),
  };
}

/**
 * Lists by tenancy key. The code string is the outer key: it comes from the agent version cache as
 * the same string each run, so the lookup does not rehash it.
 */
class KeyedLists<T> {
  private readonly byCode = new Map<string, Map<string, T[]>>();

  get(key: TenancyKey): T[] | undefined {
    return this.byCode.get(key.code)?.get(innerKey(key));
  }

  add(key: TenancyKey, item: T): void {
    let inner = this.byCode.get(key.code);
    if (!inner) this.byCode.set(key.code, (inner = new Map()));
    const name = innerKey(key);
    const list = inner.get(name);
    if (list) list.push(item);
    else inner.set(name, [item]);
  }

  remove(key: TenancyKey, item: T): void {
    const inner = this.byCode.get(key.code);
    const name = innerKey(key);
    const list = inner?.get(name);
    if (!inner || !list) return;
    const index = list.lastIndexOf(item);
    if (index >= 0) list.splice(index, 1);
    if (list.length > 0) return;
    inner.delete(name);
    if (inner.size === 0) this.byCode.delete(key.code);
  }

  clear(): void {
    this.byCode.clear();
  }
}

function innerKey(key: TenancyKey): string {
  return `${key.memoryMb}\0${key.agentName}\0${key.tenant}`;
}
