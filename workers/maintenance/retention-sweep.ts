import type { Clock } from '../../shared/clock.js';
import type { Config } from '../../shared/config.js';
import type { Logger } from '../../shared/logger.js';
import { sessionCutoffs } from '../../shared/session-lifetime.js';
import type { Db } from '../../db/database.js';
import { deleteExpiredIdempotencyKeys } from '../../db/idempotency-keys.repository.js';
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
 * Deletes expired conversations in batches until none is left, then Idempotency-Key records older
 * than 24 h, then timed-out sessions. Expiry never depends on this (every read checks it); the sweep
 * only frees the space.
 */
export async function sweepExpired(deps: SweepDeps, batch = sweepBatch): Promise<{ conversations: number; idempotencyKeys: number; sessions: number }> {
  const conversations = await deleteInBatches(() => deleteExpiredConversations(deps.db, deps.clock.now(), batch), batch);
  const idempotencyKeys = await deleteInBatches(() => deleteExpiredIdempotencyKeys(deps.db, deps.clock.now(), batch), batch);
  const sessions = await deleteTimedOutSessions(deps.db, sessionCutoffs(deps.config, deps.clock.now()));
  if (conversations || idempotencyKeys || sessions) deps.logger.info({ event: 'retention', conversations, idempotencyKeys, sessions }, 'expired conversations, keys and sessions deleted');
  return { conversations, idempotencyKeys, sessions };
}

/** Runs `deleteBatch` until it deletes fewer than `batch` rows, pausing between; answers how many it deleted. */
async function deleteInBatches(deleteBatch: () => Promise<number>, batch: number): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await deleteBatch();
    total += deleted;
    if (deleted < batch) return total;
    await new Promise((resolve) => setTimeout(resolve, pauseBetweenBatchesMs));
  }
}
