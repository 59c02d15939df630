import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { createDb, type Db } from '../../db/database.js';
import { recordFirstRuns, recordRunsOnConversations, type ConversationRun } from '../../db/run-commit.repository.js';
import { createConversationRunWriter, type ConversationRunWriter } from '../../runs/conversation-run-writer.js';
import { successRecord } from '../helpers/fixtures.js';
import { testEnv } from '../helpers/test-env.js';

/**
 * Runs on different conversations that end together are committed together (runs/conversation-run-writer.ts),
 * each with its own outcome.
 */
describe('conversation run writer', () => {
  let db: Db;

  /** One writer per test: the runs a test writes in one turn share a batch. */
  let writer: ConversationRunWriter;

  before(() => {
    db = createDb(testEnv.DATABASE_URL!, 2);
  });
  after(() => db.destroy());
  beforeEach(() => {
    writer = createConversationRunWriter(db);
  });

  const owner = randomUUID();
  const entry = (query: string) => ({ agentName: 'counter', query, resultCode: 'success' as const, at: new Date().toISOString() });
  const execution = (convid: string, id?: string) => successRecord(convid, id, owner);

  /** A conversation at version 0, its first run recorded. */
  const conversation = async () => {
    const convid = randomUUID();
    const now = new Date();
    await recordFirstRuns(db, [{ conversation: { id: convid, ownerKind: 'serviceAccount', ownerId: owner, plan: 'free', now }, state: { agentVars: {}, convVars: {}, history: [entry('first')], added: entry('first') }, execution: execution(convid) }]);
    return convid;
  };

  /** The second call on `convid`, counting to 2, read at `version`. */
  const secondRun = (convid: string, options: { version?: number; runId?: string; pause?: ConversationRun['pause'] } = {}): ConversationRun => ({
    convid,
    version: options.version ?? 0,
    state: { agentVars: { counter: { n: 2 } }, convVars: {}, history: [], added: entry('second') },
    pause: options.pause ?? { kind: 'keep' },
    execution: execution(convid, options.runId),
    now: new Date(),
  });

  const stored = async (convids: string[]) => {
    const rows = await db.selectFrom('conversations').select(['id', 'version', 'agent_vars', 'history']).where('id', 'in', convids).execute();
    return convids.map((convid) => {
      const row = rows.find((each) => each.id === convid)!;
      return { version: row.version, n: (row.agent_vars as { counter?: { n: number } }).counter?.n, queries: row.history.map((each) => each.query) };
    });
  };

  /** The transaction that wrote each run's execution record. */
  const transactionsOf = async (runIds: string[]) => {
    const { rows } = await sql<{ id: string; tx: string }>`select id, xmin::text as tx from executions where id = any(${runIds})`.execute(db);
    return runIds.map((id) => rows.find((row) => row.id === id)?.tx);
  };

  it('writes the runs on different conversations that end in one turn in one transaction', async () => {
    const convids = await Promise.all([conversation(), conversation(), conversation()]);
    const runs = convids.map((convid) => secondRun(convid));
    const outcomes = await Promise.all(runs.map((run) => writer.write(run)));
    assert.deepEqual(outcomes, ['committed', 'committed', 'committed']);
    assert.deepEqual(await stored(convids), convids.map(() => ({ version: 1, n: 2, queries: ['first', 'second'] })));
    const transactions = await transactionsOf(runs.map((run) => run.execution.id));
    assert.equal(new Set(transactions).size, 1, `one transaction, got ${transactions.join(', ')}`);
  });

  it('tells the run whose conversation moved on, and keeps the others of its group', async () => {
    const convids = await Promise.all([conversation(), conversation(), conversation()]);
    await db.updateTable('conversations').set({ version: 7 }).where('id', '=', convids[1]!).execute();
    const runs = convids.map((convid) => secondRun(convid));
    const outcomes = await Promise.all(runs.map((run) => writer.write(run)));
    assert.deepEqual(outcomes, ['committed', 'stale', 'committed']);
    assert.deepEqual(await stored(convids), [
      { version: 1, n: 2, queries: ['first', 'second'] },
      { version: 7, n: undefined, queries: ['first'] },
      { version: 1, n: 2, queries: ['first', 'second'] },
    ]);
    assert.deepEqual((await transactionsOf([runs[1]!.execution.id]))[0], undefined, 'the stale run is not recorded');
  });

  it('fails alone the run whose record is there already (its caller was answered), and keeps the others', async () => {
    const convids = await Promise.all([conversation(), conversation(), conversation()]);
    const taken = randomUUID();
    await db.insertInto('executions').values(execution(convids[0]!, taken)).execute();
    const runs = [secondRun(convids[0]!, { runId: taken }), secondRun(convids[1]!), secondRun(convids[2]!)];
    const outcomes = await Promise.allSettled(runs.map((run) => writer.write(run)));
    assert.equal(outcomes[0]!.status, 'rejected');
    assert.equal(((outcomes[0] as PromiseRejectedResult).reason as { constraint?: string }).constraint, 'executions_pkey');
    assert.deepEqual(outcomes.slice(1), [
      { status: 'fulfilled', value: 'committed' },
      { status: 'fulfilled', value: 'committed' },
    ]);
    assert.deepEqual(await stored(convids), [
      { version: 0, n: undefined, queries: ['first'] },
      { version: 1, n: 2, queries: ['first', 'second'] },
      { version: 1, n: 2, queries: ['first', 'second'] },
    ]);
  });

  it('locks a group\'s conversations in one order: groups sharing them in opposite orders never deadlock', async () => {
    // Two connections commit groups over the same conversations at once, one in the reverse order of
    // the other: without the statement locking its rows in id order, they wait on each other crosswise.
    // Both are held to plans that visit the rows in the order given (no hash or merge join, no
    // sequential scan), as PostgreSQL may plan them on a larger table.
    const inGivenOrder = (url: string) => `${url}${url.includes('?') ? '&' : '?'}options=${encodeURIComponent('-c enable_hashjoin=off -c enable_mergejoin=off -c enable_seqscan=off')}`;
    const one = createDb(inGivenOrder(testEnv.DATABASE_URL!), 1);
    const other = createDb(inGivenOrder(testEnv.DATABASE_URL!), 1);
    try {
      for (let round = 0; round < 10; round++) {
        const convids = await Promise.all(Array.from({ length: 40 }, () => conversation()));
        const forward = convids.map((convid) => secondRun(convid));
        const backward = [...convids].reverse().map((convid) => secondRun(convid));
        const outcomes = await Promise.all([recordRunsOnConversations(one, forward), recordRunsOnConversations(other, backward)]);
        // Both read version 0: the first to lock keeps its runs, the other finds every conversation moved on.
        assert.deepEqual([...outcomes].sort(), ['committed', 'stale']);
        assert.deepEqual(new Set((await stored(convids)).map((each) => each.version)), new Set([1]));
      }
    } finally {
      await Promise.all([one.destroy(), other.destroy()]);
    }
  });

  it('writes a run that deletes its pause in a statement of its own', async () => {
    const convids = await Promise.all([conversation(), conversation(), conversation()]);
    const runs = [secondRun(convids[0]!), secondRun(convids[1]!, { pause: { kind: 'delete' } }), secondRun(convids[2]!)];
    const outcomes = await Promise.all(runs.map((run) => writer.write(run)));
    assert.deepEqual(outcomes, ['committed', 'committed', 'committed']);
    const [grouped, deleting, other] = await transactionsOf(runs.map((run) => run.execution.id));
    assert.equal(grouped, other, 'the runs that keep their pause share a transaction');
    assert.notEqual(deleting, grouped);
  });
});
