import { disposeIsolate, type AgentIsolate, type AgentIsolateKey } from './agent-isolate.js';

export interface IsolatePoolOptions {
  /** Idle isolates kept in total, over all agents; the least recently used goes first. 0 turns reuse off. */
  maxIdle: number;
  /** Runs after which an isolate is retired, so slow leaks (built-in prototypes, V8 caches) stay bounded. */
  maxRunsPerIsolate: number;
}

export interface IsolatePoolStats {
  /** Runs that got a warm isolate. */
  hits: number;
  /** Runs that had to load a fresh one. */
  misses: number;
  /** Warm isolates waiting now. */
  idle: number;
  /** Given back but disposed: too many runs or too much heap. */
  retired: number;
  /** Disposed to stay within maxIdle. */
  evicted: number;
}

/**
 * Warm AgentIsolates waiting for the next run of their code. An isolate is in the pool only while
 * idle: `take` hands it to one run, and the run gives it back only after a clean success
 * (run-sandbox.ts); every other ending disposes it.
 */
export interface IsolatePool {
  /** A warm isolate loaded for this key, or undefined (load a fresh one). */
  take(key: AgentIsolateKey): AgentIsolate | undefined;
  /** Keeps an isolate whose run ended clean, unless it is due to retire. */
  give(agent: AgentIsolate): void;
  stats(): IsolatePoolStats;
  /** Disposes every idle isolate (shutdown, tests). */
  clear(): void;
}

export const defaultPoolOptions: IsolatePoolOptions = { maxIdle: 32, maxRunsPerIsolate: 500 };

/** Garbage is collected between runs; live heap past this share of the limit is a leak to stop early. */
const heapRetireShare = 0.5;
/** Reading heap statistics waits for the isolate's lock (~10 µs); every few runs is often enough. */
const heapCheckEvery = 8;

export function createIsolatePool(options: Partial<IsolatePoolOptions> = {}): IsolatePool {
  const { maxIdle, maxRunsPerIsolate } = { ...defaultPoolOptions, ...options };
  // The idle isolates of each code, most recently used last; keyed by the code string, which comes
  // from the agent version cache as the same string each run, so the lookup does not rehash it.
  const idleByCode = new Map<string, AgentIsolate[]>();
  // Every idle isolate, least recently used first (a Set keeps insertion order).
  const idleOrder = new Set<AgentIsolate>();
  const counts = { hits: 0, misses: 0, retired: 0, evicted: 0 };

  function remove(agent: AgentIsolate): void {
    idleOrder.delete(agent);
    const list = idleByCode.get(agent.key.code);
    if (!list) return;
    const index = list.indexOf(agent);
    if (index >= 0) list.splice(index, 1);
    if (list.length === 0) idleByCode.delete(agent.key.code);
  }

  function take(key: AgentIsolateKey): AgentIsolate | undefined {
    const list = idleByCode.get(key.code) ?? [];
    for (let i = list.length - 1; i >= 0; i--) {
      const agent = list[i]!;
      if (agent.key.agentName !== key.agentName || agent.key.memoryMb !== key.memoryMb || agent.isolate.isDisposed) continue;
      remove(agent);
      counts.hits += 1;
      return agent;
    }
    counts.misses += 1;
    return undefined;
  }

  function give(agent: AgentIsolate): void {
    if (isDueToRetire(agent, maxRunsPerIsolate)) {
      counts.retired += 1;
      disposeIsolate(agent.isolate);
      return;
    }
    const list = idleByCode.get(agent.key.code);
    if (list) list.push(agent);
    else idleByCode.set(agent.key.code, [agent]);
    idleOrder.add(agent);
    for (const oldest of idleOrder) {
      if (idleOrder.size <= maxIdle) break;
      remove(oldest);
      counts.evicted += 1;
      disposeIsolate(oldest.isolate);
    }
  }

  function clear(): void {
    for (const agent of idleOrder) disposeIsolate(agent.isolate);
    idleOrder.clear();
    idleByCode.clear();
  }

  return { take, give, clear, stats: () => ({ ...counts, idle: idleOrder.size }) };
}

function isDueToRetire(agent: AgentIsolate, maxRuns: number): boolean {
  if (agent.isolate.isDisposed || agent.runs >= maxRuns) return true;
  if (agent.runs % heapCheckEvery !== 1) return false;
  const heap = agent.isolate.getHeapStatisticsSync();
  const used = heap.used_heap_size + heap.externally_allocated_size;
  return used > agent.key.memoryMb * 1024 * 1024 * heapRetireShare;
}
