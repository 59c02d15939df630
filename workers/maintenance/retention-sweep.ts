import type { Clock } from '../../shared/clock.js';
import type { Config } from '../../shared/config.js';
import type { Logger } from '../../shared/logger.js';
import { sessionCutoffs } from '../../shared/session-lifetime.js';
import type { Db } from '../../db/database.js';
import { deleteExpiredConversations } from '../../db/retention.repository.js';
import { deleteTimedOutSessions } from '../../db/sessions.repository.js';

export interface SweepDeps {
  config: Pick<Config, 'sessionIdleMinutes' | 'sessionMaxHours'>;
  db: Db;
  clock: Clock;
  logger: Logger;
}

/** Conversations deleted per statement, and the pause between statements so calls get the database in between. */
export const sweepBatch = 1000;
const pauseBetweenBatchesMs = 20;

/**
 * Deletes expired conversations in batches until none is left, then timed-out sessions. Expiry never
 * depends on this (every read checks it); the sweep only frees the space.
 */
export async function sweepExpired(deps: SweepDeps, batch = sweepBatch): Promise<{ conversations: number; sessions: number }> {
  let conversations = 0;
  for (;;) {
    const deleted = await deleteExpiredConversations(deps.db, deps.clock.now(), batch);
    conversations += deleted;
    if (deleted < batch) break;
    await new Promise((resolve) => setTimeout(resolve, pauseBetweenBatchesMs));
  }
  const sessions = await deleteTimedOutSessions(deps.db, sessionCutoffs(deps.config, deps.clock.now()));
  if (conversations || sessions) deps.logger.info({ event: 'retention', conversations, sessions }, 'expired conversations and sessions deleted');
  return { conversations, sessions };
}
