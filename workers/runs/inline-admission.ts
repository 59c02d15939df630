import type { Clock } from '../../shared/clock.js';

/**
 * Which calls a web process tries to answer itself (workers/inline-runs.ts), so that agents that are
 * not short, and callers it has no warm sandbox for, cost it little:
 *
 * - An agent whose run waited on an async sys call goes to the queue for `queueForMs`: its next run
 *   would most likely wait too. So does one whose runs computed past their synchronous entry twice in
 *   a row (once, between short runs, is a pause of the machine or a cold context's first compile).
 * - Loading a context (~4 ms of the thread: a new isolate, the bootstrap, the lockdown) is allowed
 *   `loadsPerSecond` times a second; a call that would need one beyond that goes to the queue. A
 *   caller mix wider than the warm contexts kept here costs this process at most that.
 * - While this process's event loop runs late (`late`), an agent whose entries cost its thread more
 *   than `costlyEntryMs` (a moving average) goes to the queue, one call a `costlyRetryMs` still tried
 *   to see whether it still does. A cheaper one stays: queueing a call costs the web process about as
 *   much as entering a hello-like agent, and adds a worker's, Redis's and PostgreSQL's share on top,
 *   so sending such runs away from a late loop made it later still.
 * - While nothing is known of an agent here (none of its runs answered here yet, or its time in the
 *   queue is over), `probesPerAgent` of its calls are tried at once, and the others go to the queue
 *   at once: a burst of a new agent's calls (a deploy, a reconnect storm) would otherwise all wait on
 *   the one context its first call loads, and on that run, before most of them learn that it waits on
 *   the host and go to the queue after all (issue 49: ~110 ms each of 200 calls at once). Once one
 *   of its runs was answered here, the agent's calls are all tried.
 */
export interface InlineAdmission {
  /** Whether a call of this agent may be tried here, the event loop running late or not (its agent's verdict alone: see `tryHere`). */
  admits(agentName: string, late: boolean): boolean;
  /**
   * A call of this agent to try here: `admits`, and for an agent not known short yet, one of its
   * `probesPerAgent` tries at once. What to call once the try is over; undefined: queue the call.
   */
  tryHere(agentName: string, late: boolean): (() => void) | undefined;
  /** Takes one of this second's context loads, if one is left. */
  mayLoad(): boolean;
  /** A run of the agent waited on an async sys call ('waits') or computed past its entry ('long'). */
  notShort(agentName: string, why: 'waits' | 'long'): void;
  /** A run of the agent was answered here. */
  wasShort(agentName: string): void;
  /** A run of the agent was over within its entry into a warm context, which took `cpuMs` of the isolate's CPU. */
  entered(agentName: string, cpuMs: number): void;
}

export interface InlineAdmissionOptions {
  queueForMs: number;
  loadsPerSecond: number;
  /** Agents remembered at most (the oldest forgotten first). */
  maxAgents: number;
  costlyEntryMs: number;
  costlyRetryMs: number;
  /** Calls of an agent not known short yet tried at once (the others go to the queue meanwhile). */
  probesPerAgent: number;
}

export const defaultAdmission: InlineAdmissionOptions = { queueForMs: 60_000, loadsPerSecond: 20, maxAgents: 1000, costlyEntryMs: 2, costlyRetryMs: 1000, probesPerAgent: 1 };

/**
 * The weight of an entry in its agent's moving average, and the entries measured before it counts:
 * a hello entry takes ~0.05 ms, and a garbage collection in the isolate (1–5 ms, a few entries in a
 * thousand, more while its code is still cold) does not make it costly.
 */
const entryWeight = 0.1;
const entriesToJudge = 8;

interface EntryCost {
  /** Moving average of its entries' CPU time, ms. */
  ms: number;
  entries: number;
  /** When an entry was last measured or tried while costly. */
  triedAt: number;
}

/** Runs computing past their entry this many times in a row send the agent to the queue. */
const longInARow = 2;

interface Verdict {
  /** Until when its calls go to the queue; 0 while it only has strikes. */
  queuedUntil: number;
  /** Its last runs here that computed past their entry, in a row. */
  strikes: number;
}

export function createInlineAdmission(clock: Clock, options: InlineAdmissionOptions = defaultAdmission): InlineAdmission {
  const verdicts = new Map<string, Verdict>();
  const costs = new Map<string, EntryCost>();
  /** Agents with a run answered here since they last went to the queue. */
  const short = new Map<string, true>();
  /** Tries under way of agents not known short. */
  const probes = new Map<string, number>();
  let second = 0;
  let loads = 0;
  const now = () => clock.now().getTime();
  const remember = <T>(map: Map<string, T>, agentName: string, value: T) => {
    map.delete(agentName);
    map.set(agentName, value);
    if (map.size > options.maxAgents) map.delete(map.keys().next().value!);
  };
  const cheapEnough = (agentName: string) => {
    const cost = costs.get(agentName);
    if (!cost || cost.entries < entriesToJudge || cost.ms <= options.costlyEntryMs) return true;
    if (now() - cost.triedAt < options.costlyRetryMs) return false;
    cost.triedAt = now();
    return true;
  };

  const probeOver = (agentName: string) => {
    const left = (probes.get(agentName) ?? 1) - 1;
    if (left > 0) probes.set(agentName, left);
    else probes.delete(agentName);
  };

  const admission: InlineAdmission = {
    admits(agentName, late) {
      const verdict = verdicts.get(agentName);
      if (verdict) {
        if (now() < verdict.queuedUntil) return false;
        if (verdict.queuedUntil > 0) verdicts.delete(agentName);
      }
      return !late || cheapEnough(agentName);
    },
    tryHere(agentName, late) {
      const known = short.has(agentName);
      const under = probes.get(agentName) ?? 0;
      // The probes first: a call refused for them takes no costly agent's retry (cheapEnough).
      if (!known && under >= options.probesPerAgent) return undefined;
      if (!admission.admits(agentName, late)) return undefined;
      if (known) return () => undefined;
      probes.set(agentName, under + 1);
      let over = false;
      return () => {
        if (over) return;
        over = true;
        probeOver(agentName);
      };
    },
    mayLoad() {
      const current = Math.floor(now() / 1000);
      if (current !== second) {
        second = current;
        loads = 0;
      }
      if (loads >= options.loadsPerSecond) return false;
      loads += 1;
      return true;
    },
    notShort(agentName, why) {
      const verdict = verdicts.get(agentName) ?? { queuedUntil: 0, strikes: 0 };
      verdict.strikes += 1;
      if (why === 'waits' || verdict.strikes >= longInARow) {
        verdict.queuedUntil = now() + options.queueForMs;
        short.delete(agentName);
      }
      remember(verdicts, agentName, verdict);
    },
    wasShort(agentName) {
      verdicts.delete(agentName);
      remember(short, agentName, true);
    },
    entered(agentName, cpuMs) {
      const cost = costs.get(agentName);
      remember(costs, agentName, { ms: cost ? cost.ms + entryWeight * (cpuMs - cost.ms) : cpuMs, entries: (cost?.entries ?? 0) + 1, triedAt: now() });
    },
  };
  return admission;
}
