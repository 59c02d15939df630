import type { Config } from '../../shared/config.js';
import type { Clock } from '../../shared/clock.js';
import { sessionCutoffs } from '../../shared/session-lifetime.js';
import type { Db } from '../../db/database.js';
import { isSessionLive } from '../../db/sessions.repository.js';

/** How often a run made with a session cookie checks that the session still lives. */
export const sessionCheckMs = 1000;

export interface SessionWatchDeps {
  config: Pick<Config, 'sessionIdleMinutes' | 'sessionMaxHours'>;
  db: Db;
  clock: Clock;
}

/**
 * Watches the session a run was started with, from the start of the run and every second: once it has
 * ended (logout, password reset, idle or maximum lifetime passed), `onEnded` is called once. The run
 * itself does not count as activity. Returns the function that stops watching.
 */
export function watchSession(deps: SessionWatchDeps, sessionId: string, onEnded: () => void): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const check = async () => {
    const live = await sessionIsLive(deps, sessionId).catch(() => true); // unreachable database: the commit check decides
    if (stopped) return;
    if (!live) {
      stopped = true;
      return onEnded();
    }
    timer = setTimeout(() => void check(), sessionCheckMs);
  };
  void check();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

export function sessionIsLive(deps: SessionWatchDeps, sessionId: string): Promise<boolean> {
  return isSessionLive(deps.db, sessionId, sessionCutoffs(deps.config, deps.clock.now()));
}
