import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { HistoryEntry } from '../../shared/api.js';
import { createDb, lockTimeoutOf, type Db } from '../../db/database.js';
import { touchConversation } from '../../db/conversations.repository.js';
import { setPinned } from '../../db/retention.repository.js';
import { recordConsecutiveRuns, recordConversationRun, recordFirstRuns, recordRunsOnConversations, type ConversationRun } from '../../db/run-commit.repository.js';
import { successRecord } from '../helpers/fixtures.js';
import { testEnv } from '../helpers/test-env.js';

/**
 * The lock timeout (CONV_WAIT_MS) bounds the wait for a conversation's row lock in every statement
 * that writes the row, set in the statement's own transaction (DESIGN §17: no startup option, no
 * session SET), so the connection keeps nothing of it: through PgBouncer in transaction mode the next
 * transaction may be another client's.
 */
describe('the lock timeout on conversation rows', () => {
  let holder: Db;
  const owner = randomUUID();
  const entry = (query: string): HistoryEntry => ({ agentName: 'counter', query, resultCode: 'success', at: new Date().toISOString() });

  before(() => {
    holder = createDb(testEnv.DATABASE_URL!, 2);
  });
  after(() => holder.destroy());

  const newConversation = async () => {
    const convid = randomUUID();
    const now = new Date();
    await recordFirstRuns(holder, [{ conversation: { id: convid, ownerKind: 'serviceAccount', ownerId: owner, plan: 'free', now }, execution: successRecord(convid, randomUUID(), owner, now) }]);
    return convid;
  };

  const run = (convid: string, pause: ConversationRun['pause'] = { kind: 'keep' }): ConversationRun => {
    const added = entry('next');
    return { convid, version: 0, state: { agentVars: { counter: { n: 1 } }, convVars: {}, history: [added], added }, pause, execution: successRecord(convid, randomUUID(), owner), now: new Date() };
  };

  const writes: Array<[string, (db: Db, convid: string) => Promise<unknown>]> = [
    ['a run that keeps its pause', (db, convid) => recordConversationRun(db, run(convid))],
    ['a run that ends its pause', (db, convid) => recordConversationRun(db, run(convid, { kind: 'delete' }))],
    ['runs on conversations together', async (db, convid) => recordRunsOnConversations(db, [run(convid), run(await newConversation())])],
    ['consecutive runs', (db, convid) => recordConsecutiveRuns(db, [run(convid), { ...run(convid), version: 1 }])],
    ['a call asked again', (db, convid) => db.transaction().execute((trx) => touchConversation(trx, convid, new Date(), lockTimeoutOf(db)))],
    ['a pin', (db, convid) => setPinned(db, { kind: 'serviceAccount', id: owner }, convid, true, new Date())],
  ];

  for (const preparedStatements of [false, true]) {
    describe(preparedStatements ? 'with named prepared statements' : 'with unnamed statements', () => {
      let db: Db;
      before(() => {
        // One connection: what a statement left on it, the next one finds.
        db = createDb(testEnv.DATABASE_URL!, 1, { lockTimeoutMs: 100, preparedStatements });
      });
      after(() => db.destroy());

      for (const [what, write] of writes) {
        it(`gives up waiting for a locked conversation after the timeout: ${what}, changing nothing and leaving the connection's setting as it was`, async () => {
          const convid = await newConversation();
          const { rows } = await sql<{ lock_timeout: string }>`show lock_timeout`.execute(db);
          const serverSetting = rows[0]!.lock_timeout;
          await holder.transaction().execute(async (trx) => {
            await sql`select id from conversations where id = ${convid} for update`.execute(trx);
            await assert.rejects(write(db, convid), (err: { code?: string }) => err.code === '55P03');
          });
          const kept = await holder.selectFrom('conversations').select(['version', 'pinned', 'history']).where('id', '=', convid).executeTakeFirstOrThrow();
          assert.deepEqual(kept, { version: 0, pinned: false, history: [] });
          const after = await sql<{ lock_timeout: string }>`show lock_timeout`.execute(db);
          assert.equal(after.rows[0]!.lock_timeout, serverSetting);
          assert.notEqual(serverSetting, '100ms');
        });
      }

      it(`writes the run once the lock is free, ${preparedStatements ? 'in a statement prepared on the connection' : 'preparing nothing on the connection'}`, async () => {
        const convid = await newConversation();
        assert.equal(await recordConversationRun(db, run(convid)), 'committed');
        const kept = await holder.selectFrom('conversations').select('version').where('id', '=', convid).executeTakeFirstOrThrow();
        assert.equal(kept.version, 1);
        const prepared = await sql<{ name: string }>`select name from pg_prepared_statements`.execute(db);
        assert.equal(prepared.rows.some((row) => row.name.startsWith('record-conversation-run-')), preparedStatements);
      });
    });
  }
});
