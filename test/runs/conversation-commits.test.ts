import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { HistoryEntry } from '../../shared/api.js';
import { historyLimit } from '../../shared/history.js';
import type { RunJobData } from '../../shared/jobs.js';
import { createDb, type Db } from '../../db/database.js';
import { recordFirstRuns } from '../../db/run-commit.repository.js';
import { AbandonedRunError } from '../../runs/commit.js';
import { createConversationCommits, type ChainedRun } from '../../runs/conversation-commits.js';
import { baseNotKept, conversationChanged, type RunAgain, type RunEnding } from '../../runs/run-endings.js';
import { testEnv } from '../helpers/test-env.js';

/**
 * A busy conversation's commits in one worker (runs/conversation-commits.ts): each goes out only once
 * what it started from is kept, and those gathered behind one under way are written in one statement.
 */
describe('conversation commits', () => {
  let db: Db;

  before(() => {
    db = createDb(testEnv.DATABASE_URL!, 2);
  });
  after(() => db.destroy());

  const entry = (query: string): HistoryEntry => ({ agentName: 'counter', query, resultCode: 'success', at: new Date().toISOString() });
  const owner = randomUUID();

  const conversationWith = async (history: HistoryEntry[]) => {
    const convid = randomUUID();
    const now = new Date();
    const runId = randomUUID();
    await recordFirstRuns(db, [
      {
        conversation: { id: convid, ownerKind: 'serviceAccount', ownerId: owner, plan: 'free', now },
        state: { agentVars: {}, convVars: {}, history, added: history.at(-1) ?? entry('none') },
        execution: { id: runId, convid, agent_name: 'counter', agent_version: 1, draft_id: null, principal_kind: 'serviceAccount', principal_id: owner, request_id: runId, result_code: 'success', error_message: null, response: '{}', started_at: now, finished_at: now, duration_ms: 0 },
      },
    ]);
    return convid;
  };

  /** The n-th call on the conversation (version n - 1 before it), counting to n; `base` as its hand-over gives it. */
  const call = (convid: string, n: number, base?: Promise<boolean>, runId: string = randomUUID()): ChainedRun => {
    const data = { runId, requestId: runId, convid, agentName: 'counter', caller: { kind: 'serviceAccount', id: owner, role: 'user', plan: 'free' } } as unknown as RunJobData;
    const added = entry(`call ${n}`);
    return {
      data,
      version: n - 1,
      changes: { state: { agentVars: { counter: { n } }, convVars: {}, history: [], added }, pause: { kind: 'keep' } },
      record: { startedAt: new Date(), agentVersion: 1, response: { resultCode: 'success', output: [{ type: 'text', text: `${n}` }], convid } as never },
      ...(base ? { base } : {}),
    };
  };

  /** What a successor is told of this commit: that it kept the state it was handed. */
  const keptBy = (outcome: Promise<RunEnding | RunAgain>) => outcome.then((result) => result.kind === 'response', () => false);

  /** Each call handed the conversation by the one before, its commit queued behind that one's. */
  const chain = (commits: ReturnType<typeof createConversationCommits>, convid: string, runs: Array<{ runId?: string }>) => {
    const outcomes: Array<Promise<RunEnding | RunAgain>> = [];
    runs.forEach((run, i) => {
      const outcome = commits.commit(call(convid, i + 1, i === 0 ? undefined : keptBy(outcomes[i - 1]!), run.runId));
      outcome.catch(() => undefined);
      outcomes.push(outcome);
    });
    return outcomes;
  };

  const stored = (convid: string) => db.selectFrom('conversations').select(['version', 'agent_vars', 'history']).where('id', '=', convid).executeTakeFirstOrThrow();

  const transactionsOf = async (runIds: string[]) => {
    const { rows } = await sql<{ id: string; tx: string }>`select id, xmin::text as tx from executions where id = any(${runIds})`.execute(db);
    return runIds.map((id) => rows.find((row) => row.id === id)?.tx);
  };

  it('writes the commits gathered behind one under way together, each run starting from the one before', async () => {
    const full = Array.from({ length: historyLimit - 1 }, (_, i) => entry(`old ${i}`));
    const convid = await conversationWith(full);
    const runIds = Array.from({ length: 4 }, () => randomUUID());
    const outcomes = await Promise.all(chain(createConversationCommits(db), convid, runIds.map((runId) => ({ runId }))));
    assert.deepEqual(
      outcomes.map((outcome) => outcome.kind),
      ['response', 'response', 'response', 'response'],
    );
    const row = await stored(convid);
    assert.equal(row.version, 4);
    assert.deepEqual(row.agent_vars, { counter: { n: 4 } });
    // At the limit: every call's entry in order, the oldest dropped.
    assert.equal(row.history.length, historyLimit);
    assert.deepEqual(row.history.slice(-5).map((each) => each.query), ['old 498', 'call 1', 'call 2', 'call 3', 'call 4']);
    assert.equal(row.history[0]!.query, 'old 3');
    // The first went out alone; the three that gathered behind it in one statement (one transaction).
    const [first, ...gathered] = await transactionsOf(runIds);
    assert.equal(new Set(gathered).size, 1, 'the gathered commits share a transaction');
    assert.notEqual(first, gathered[0]);
  });

  it('gives each run of a failed group its own outcome: the one whose record exists fails, and the runs after it are wrong', async () => {
    const convid = await conversationWith([]);
    const taken = randomUUID();
    await db
      .insertInto('executions')
      .values({ id: taken, convid, agent_name: 'counter', agent_version: 1, draft_id: null, principal_kind: 'serviceAccount', principal_id: owner, request_id: taken, result_code: 'unexpected', error_message: null, response: '{}', started_at: new Date(), finished_at: new Date(), duration_ms: 0 })
      .execute();
    const outcomes = await Promise.allSettled(chain(createConversationCommits(db), convid, [{}, {}, { runId: taken }, {}]));
    assert.equal(outcomes[0]!.status, 'fulfilled');
    assert.equal(outcomes[1]!.status, 'fulfilled');
    assert.ok(outcomes[2]?.status === 'rejected' && outcomes[2].reason instanceof AbandonedRunError, 'the run its caller was told about keeps nothing');
    assert.deepEqual(outcomes[3], { status: 'fulfilled', value: baseNotKept() });
    const row = await stored(convid);
    assert.equal(row.version, 2);
    assert.deepEqual(row.agent_vars, { counter: { n: 2 } });
    assert.deepEqual(row.history.map((each) => each.query), ['call 1', 'call 2']);
  });

  it('tells the first run that another writer moved the conversation on, and the runs after it that they are wrong', async () => {
    const convid = await conversationWith([]);
    await db.updateTable('conversations').set({ version: 7 }).where('id', '=', convid).execute();
    const outcomes = await Promise.all(chain(createConversationCommits(db), convid, [{}, {}, {}]));
    assert.deepEqual(outcomes[0], conversationChanged());
    assert.deepEqual(outcomes.slice(1), [baseNotKept(), baseNotKept()]);
    assert.equal((await stored(convid)).version, 7);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from executions where convid = ${convid}`.execute(db);
    assert.equal(rows[0]!.n, 1, 'only the first run of the conversation is recorded');
  });
});
