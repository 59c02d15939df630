import type { Config } from '../../shared/config.js';
import type { Clock } from '../../shared/clock.js';
import { sessionCutoffs } from '../../shared/session-lifetime.js';
import type { Db } from '../../db/database.js';
import { findLiveSessionIds } from '../../db/sessions.repository.js';
import { mustLogin, type SandboxEnding } from '../sandbox/sandbox-endings.js';

/** How often a worker checks the sessions its runs were started with. */
export const sessionCheckMs = 1000;

export interface SessionWatchDeps {
  config: Pick<Config, 'sessionIdleMinutes' | 'sessionMaxHours'>;
  db: Db;
  clock: Clock;
}

/**
 * The sessions a worker's runs were started with, checked together (DESIGN §11: one query a second
 * per worker, not one per run). The run itself does not count as activity.
 */
export interface SessionWatch {
  /** Calls `onEnded` once when the session has ended (logout, password reset, idle or maximum lifetime passed); returns the function that stops watching. */
  watch(sessionId: string, onEnded: () => void): () => void;
  close(): void;
}

export function createSessionWatch(deps: SessionWatchDeps): SessionWatch {
  const watchers = new Map<string, Set<() => void>>();
  // Set from scheduling until the check it scheduled has finished, so one check runs at a time.
  let timer: NodeJS.Timeout | undefined;

  async function check(): Promise<void> {
    const ids = [...watchers.keys()];
    // An unreachable database ends nothing here: the check before the commit decides.
    const live = await findLiveSessionIds(deps.db, ids, sessionCutoffs(deps.config, deps.clock.now())).catch(() => new Set(ids));
    timer = undefined;
    for (const id of ids) {
      if (live.has(id)) continue;
      const ended = watchers.get(id);
      watchers.delete(id);
      for (const onEnded of ended ?? []) onEnded();
    }
    schedule();
  }

  function schedule(): void {
    if (!timer && watchers.size > 0) timer = setTimeout(() => void check(), sessionCheckMs);
  }

  return {
    watch(sessionId, onEnded) {
      const set = watchers.get(sessionId) ?? new Set();
      set.add(onEnded);
      watchers.set(sessionId, set);
      schedule();
      return () => {
        set.delete(onEnded);
        if (set.size === 0 && watchers.get(sessionId) === set) watchers.delete(sessionId);
      };
    },
    close() {
      clearTimeout(timer);
      watchers.clear();
    },
  };
}

/** Whether the session still lives (one query). */
export async function sessionIsLive(deps: SessionWatchDeps, sessionId: string): Promise<boolean> {
  return (await findLiveSessionIds(deps.db, [sessionId], sessionCutoffs(deps.config, deps.clock.now()))).has(sessionId);
}

/**
 * A run made with a session keeps its changes only if the session still lives as they are committed:
 * the watch may not have seen it end yet (it checks every second). A `success` or `ask` whose session
 * has ended becomes `mustLogin`, with the output made so far.
 */
export async function confirmSession(deps: SessionWatchDeps, sessionId: string | undefined, ending: SandboxEnding): Promise<SandboxEnding> {
  if (!sessionId || (ending.resultCode !== 'success' && ending.resultCode !== 'ask')) return ending;
  if (await sessionIsLive(deps, sessionId)) return ending;
  return { ...mustLogin(), output: ending.output };
}
