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
 */
export interface InlineAdmission {
  /** Whether a call of this agent is tried here at all. */
  admits(agentName: string): boolean;
  /** Takes one of this second's context loads, if one is left. */
  mayLoad(): boolean;
  /** A run of the agent waited on an async sys call ('waits') or computed past its entry ('long'). */
  notShort(agentName: string, why: 'waits' | 'long'): void;
  /** A run of the agent was answered here. */
  wasShort(agentName: string): void;
}

export interface InlineAdmissionOptions {
  queueForMs: number;
  loadsPerSecond: number;
  /** Agents remembered at most (the oldest forgotten first). */
  maxAgents: number;
}

export const defaultAdmission: InlineAdmissionOptions = { queueForMs: 60_000, loadsPerSecond: 20, maxAgents: 1000 };

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
  let second = 0;
  let loads = 0;
  const now = () => clock.now().getTime();

  return {
    admits(agentName) {
      const verdict = verdicts.get(agentName);
      if (!verdict) return true;
      if (now() < verdict.queuedUntil) return false;
      if (verdict.queuedUntil > 0) verdicts.delete(agentName);
      return true;
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
      if (why === 'waits' || verdict.strikes >= longInARow) verdict.queuedUntil = now() + options.queueForMs;
      verdicts.delete(agentName);
      verdicts.set(agentName, verdict);
      if (verdicts.size > options.maxAgents) verdicts.delete(verdicts.keys().next().value!);
    },
    wasShort(agentName) {
      verdicts.delete(agentName);
    },
  };
}
