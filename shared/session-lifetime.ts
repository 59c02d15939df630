import type { Config } from './config.js';

/** The times before which a session is over: last activity (idle timeout) and creation (maximum lifetime). */
export interface SessionCutoffs {
  idleSince: Date;
  createdSince: Date;
}

/** A session is live at `now` when it was used after `idleSince` and created after `createdSince`. */
export function sessionCutoffs(config: Pick<Config, 'sessionIdleMinutes' | 'sessionMaxHours'>, now: Date): SessionCutoffs {
  return {
    idleSince: new Date(now.getTime() - config.sessionIdleMinutes * 60_000),
    createdSince: new Date(now.getTime() - config.sessionMaxHours * 3_600_000),
  };
}

export function sessionMaxAgeSeconds(config: Pick<Config, 'sessionMaxHours'>): number {
  return config.sessionMaxHours * 3600;
}
