import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { HistoryEntry } from '../../shared/api.js';
import { historyLimit } from '../../shared/history.js';
import { createDb, type Db } from '../../db/database.js';
import { recordConversationRun, recordFirstRuns, recordRunsOnConversations, type ConversationRun } from '../../db/run-commit.repository.js';
import type { NewExecution } from '../../db/schema.js';
import { testEnv } from '../helpers/test-env.js';

/** A commit appends the run's history entry where the history is stored, keeping the newest `historyLimit`. */
describe('history append at commit', () => {
  let db: Db;

  before(() => {
    db = createDb(testEnv.DATABASE_URL!, 2);
  });
  after(() => db.destroy());

  const entry = (query: string): HistoryEntry => ({ agentName: 'counter', query, resultCode: 'success', at: new Date().toISOString() });
  const execution = (convid: string): NewExecution => {
    const now = new Date();
    const id = randomUUID();
    return { id, convid, agent_name: 'counter', agent_version: 1, draft_id: null, principal_kind: 'serviceAccount', principal_id: randomUUID(), request_id: id, result_code: 'success', error_message: null, response: '{}', started_at: now, finished_at: now, duration_ms: 0 };
  };

  const conversationWith = async (history: HistoryEntry[]) => {
    const convid = randomUUID();
    const now = new Date();
    const conversation = { id: convid, ownerKind: 'serviceAccount' as const, ownerId: randomUUID(), plan: 'free' as const, now };
    await recordFirstRuns(db, [{ conversation, state: { agentVars: {}, convVars: {}, history, added: history.at(-1)! }, execution: execution(convid) }]);
    return convid;
  };

  const commitOne = async (convid: string, query: string) => {
    const added = entry(query);
    // The whole history is what the handed-over state carries; the statement sends `added` alone.
    const outcome = await recordConversationRun(db, { convid, version: 0, state: { agentVars: {}, convVars: {}, history: [], added }, pause: { kind: 'keep' }, execution: execution(convid), now: new Date() });
    assert.equal(outcome, 'committed');
    const row = await db.selectFrom('conversations').select(['history', 'version']).where('id', '=', convid).executeTakeFirstOrThrow();
    return row;
  };

  it('appends the entry to a short history', async () => {
    const convid = await conversationWith([entry('first')]);
    const { history, version } = await commitOne(convid, 'second');
    assert.deepEqual(history.map((each) => each.query), ['first', 'second']);
    assert.equal(version, 1);
  });

  it('drops the oldest entry of a full history, so it stays at the limit', async () => {
    const full = Array.from({ length: historyLimit }, (_, i) => entry(`q${i}`));
    const convid = await conversationWith(full);
    const { history } = await commitOne(convid, 'newest');
    assert.equal(history.length, historyLimit);
    assert.equal(history[0]!.query, 'q1');
    assert.equal(history.at(-1)!.query, 'newest');
    // Large enough to be compressed, and with lz4 (migration 0009), which PostgreSQL here supports.
    const { rows } = await sql<{ method: string | null }>`select pg_column_compression(history) as method from conversations where id = ${convid}`.execute(db);
    assert.equal(rows[0]?.method, 'lz4');
  });

  it('writes a run that keeps the pause as it is (its prepared statement) as a group across conversations writes it, and keeps nothing of a stale one', async () => {
    const odd = 'a "quoted" \\back\\slash {brace}, NULL, line\n, é, 😀';
    const now = new Date();
    const run = (convid: string): ConversationRun => ({
      convid,
      version: 0,
      state: { agentVars: { counter: { odd } }, convVars: { odd }, history: [], added: { ...entry(odd), at: now.toISOString() } },
      pause: { kind: 'keep' },
      execution: { ...execution(convid), query: odd, started_at: now, finished_at: now },
      now,
    });
    const first = entry('first');
    const [alone, grouped] = [await conversationWith([first]), await conversationWith([first])];
    assert.equal(await recordConversationRun(db, run(alone)), 'committed');
    assert.equal(await recordRunsOnConversations(db, [run(grouped)]), 'committed');
    const kept = async (convid: string) => {
      const conversation = await db.selectFrom('conversations').select(['agent_vars', 'conv_vars', 'history', 'version', 'last_used_at']).where('id', '=', convid).executeTakeFirstOrThrow();
      const { id: _id, convid: _convid, principal_id: _principal, request_id: _request, ...record } = await db.selectFrom('executions').selectAll().where('convid', '=', convid).where('query', '=', odd).executeTakeFirstOrThrow();
      return { conversation, record };
    };
    const written = await kept(alone);
    assert.deepEqual(written, await kept(grouped));
    assert.deepEqual(written.conversation.agent_vars, { counter: { odd } });
    assert.deepEqual(written.conversation.history.map((each) => each.query), ['first', odd]);
    assert.equal(written.conversation.version, 1);
    assert.equal(written.record.background, false);
    // From the version it read again: the conversation moved on.
    const stale = run(alone);
    assert.equal(await recordConversationRun(db, stale), 'stale');
    const records = await db.selectFrom('executions').select('id').where('id', '=', stale.execution.id).execute();
    assert.equal(records.length, 0);
    assert.equal((await kept(alone)).conversation.version, 1);
  });
});
