import { waitsOnHost, type AgentContext } from './agent-context.js';
import { lowerNewThreads } from './isolate-threads.js';
import { isolateCpuTime, type SandboxIsolate } from './sandbox-isolate.js';
import { isolateLost, leftRunning, outOfCpuTime, type Failed } from './sandbox-endings.js';
import { hasEnded, type Session } from './session.js';

/** AGENT_CPU_MS when a run does not say (DESIGN §12). */
export const defaultCpuMs = 10_000;

/** How often the runs in flight are looked at: their CPU time, whether they are stuck. */
export const watchEveryMs = 100;

/**
 * A run whose agent returned is over once its code is: isolated-vm hands its result over when the
 * isolate's microtasks have drained. Still not over this long after it returned, it left a loop of
 * promise callbacks running, which never ends by itself (DESIGN §12: within 1 s of being stuck).
 */
export const stuckAfterReturnMs = 500;

interface Watched {
  readonly session: Session;
  readonly agent: AgentContext;
  /** CPU time charged to the run so far (ms). */
  cpuMs: number;
}

const watched = new Set<Watched>();
// Each isolate's CPU time (ns) at the last look, charged to its runs at the next.
const lastCpu = new WeakMap<SandboxIsolate, bigint>();
let timer: NodeJS.Timeout | undefined;

/**
 * Watches the run while its code is in `agent`'s isolate; call what is returned once it ended. The
 * watch ends the run (session.end) when it has used more than its CPU time (`timedOut`, naming
 * AGENT_CPU_MS), when its agent returned and its code still runs `stuckAfterReturnMs` later
 * (`timedOut`), or when isolated-vm lost its isolate (`errorInAgent`, the memory limit). It also
 * keeps the threads that run agent code at their lower priority (isolate-threads.ts).
 */
export function watchRun(session: Session, agent: AgentContext): () => void {
  const entry: Watched = { session, agent, cpuMs: 0 };
  const { sandbox } = agent;
  // Nothing else under way in the isolate: what it spent before (loads, runs already charged) is not this run's.
  if (sandbox.inFlight === 0 || !lastCpu.has(sandbox)) lastCpu.set(sandbox, isolateCpuTime(sandbox) ?? 0n);
  watched.add(entry);
  timer ??= setInterval(look, watchEveryMs).unref();
  return () => watched.delete(entry);
}

function look(): void {
  if (watched.size === 0) {
    clearInterval(timer);
    timer = undefined;
    return;
  }
  lowerNewThreads();
  const now = Date.now();
  for (const [sandbox, runs] of byIsolate()) {
    if (sandbox.lost) {
      for (const run of runs) endRun(run, isolateLost(sandbox));
      continue;
    }
    chargeCpu(sandbox, runs);
    for (const run of runs) {
      const limit = run.session.run.cpuMs ?? defaultCpuMs;
      if (run.cpuMs > limit) endRun(run, outOfCpuTime(limit));
      else if (run.session.returnedAt !== undefined && now - run.session.returnedAt > stuckAfterReturnMs) {
        endRun(run, leftRunning(stuckAfterReturnMs));
      }
    }
  }
}

/** The runs watched, by isolate, each list in the order the runs entered (a Set iterates in insertion order). */
function byIsolate(): Map<SandboxIsolate, Watched[]> {
  const groups = new Map<SandboxIsolate, Watched[]>();
  for (const run of watched) {
    const list = groups.get(run.agent.sandbox);
    if (list) list.push(run);
    else groups.set(run.agent.sandbox, [run]);
  }
  return groups;
}

/**
 * The isolate's CPU time since the last look, charged to the run that was computing in it: the
 * earliest entered of its runs not waiting on the host. An isolate runs one task at a time, in the
 * order they came, so a run queued behind a busy one has not started and is not charged. When every
 * run waits on the host, the time went to their code between their calls (up to 64 of a caller's
 * runs share an isolate, context-pool.ts), and each is charged its share. isolated-vm counts the
 * time its thread spends in the isolate, a blocking wait (Atomics.wait) included.
 */
function chargeCpu(sandbox: SandboxIsolate, runs: Watched[]): void {
  const cpu = isolateCpuTime(sandbox);
  if (cpu === undefined) return;
  const spentMs = Number(cpu - (lastCpu.get(sandbox) ?? cpu)) / 1e6;
  lastCpu.set(sandbox, cpu);
  if (spentMs <= 0) return;
  const computing = runs.find((run) => !waitsOnHost(run.session));
  if (computing) computing.cpuMs += spentMs;
  else for (const run of runs) run.cpuMs += spentMs / runs.length;
}

function endRun(run: Watched, ending: Failed): void {
  watched.delete(run);
  if (!hasEnded(run.session)) run.session.end(ending);
}
