import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { createDb, type Db } from '../../db/database.js';
import { recordFirstRuns, type FirstRun } from '../../db/run-commit.repository.js';
import { createFirstRunWriter } from '../../runs/first-run-writer.js';
import { publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { testEnv } from '../helpers/test-env.js';

/** First runs ending together are written together (runs/first-run-writer.ts), each with its own outcome. */
describe('first run writer', () => {
  let db: Db;

  before(() => {
    db = createDb(testEnv.DATABASE_URL!, 2);
  });
  after(() => db.destroy());

  const firstRun = (options: { runId?: string; asks?: boolean; fence?: FirstRun['fence']; now?: Date; key?: { principalId: string; key: string } } = {}): FirstRun => {
    const convid = randomUUID();
    const runId = options.runId ?? randomUUID();
    const now = options.now ?? new Date();
    const added = { agentName: 'writer', query: null, resultCode: 'success' as const, at: now.toISOString() };
    return {
      conversation: { id: convid, ownerKind: 'serviceAccount', ownerId: randomUUID(), plan: 'free', now },
      state: { agentVars: { writer: { n: 1 } }, convVars: {}, history: [added], added },
      ...(options.asks
        ? { pause: { convid, now, agentName: 'writer', agentVersion: 1, ask: { message: 'more?', inputs: [] }, journal: [], startState: { inputs: {}, vars: {}, conv: {}, history: [], randomSeed: 1 } } }
        : {}),
      execution: {
        id: runId,
        convid,
        agent_name: 'writer',
        agent_version: 1,
        draft_id: null,
        principal_kind: 'serviceAccount',
        principal_id: randomUUID(),
        request_id: runId,
        result_code: options.asks ? 'ask' : 'success',
        error_message: null,
        response: '{}',
        started_at: now,
        finished_at: now,
        duration_ms: 0,
      },
      ...(options.fence ? { fence: options.fence } : {}),
      ...(options.key
        ? {
            claim: {
              principal_kind: 'serviceAccount' as const,
              principal_id: options.key.principalId,
              key: options.key.key,
              run_id: runId,
              convid,
              agent_name: 'writer',
              fingerprint: 'f',
              created_at: now,
            },
          }
        : {}),
    };
  };

  const kept = async (runs: FirstRun[]) => {
    const ids = runs.map((run) => run.conversation.id);
    const conversations = await db.selectFrom('conversations').select('id').where('id', 'in', ids).execute();
    const executions = await db.selectFrom('executions').select('convid').where('convid', 'in', ids).execute();
    const pauses = await db.selectFrom('paused_asks').select('convid').where('convid', 'in', ids).execute();
    return { conversations: conversations.length, executions: executions.length, pauses: pauses.length };
  };

  it('writes the runs that end at the same time, with and without a pause', async () => {
    const writer = createFirstRunWriter(db);
    const runs = [firstRun(), firstRun({ asks: true }), firstRun(), firstRun({ asks: true })];
    await Promise.all(runs.map((run) => writer.write(run)));
    assert.deepEqual(await kept(runs), { conversations: 4, executions: 4, pauses: 2 });
  });

  it('writes a run\'s Idempotency-Key record with it, alone or grouped, with or without a pause; a second run with the key fails alone and keeps nothing', async () => {
    const writer = createFirstRunWriter(db);
    const principalId = randomUUID();
    const key = (name: string) => ({ principalId, key: name });
    const alone = firstRun({ key: key('alone') });
    await writer.write(alone);
    const group = [firstRun({ key: key('a') }), firstRun(), firstRun({ key: key('b') })];
    const withPauses = [firstRun({ key: key('c'), asks: true }), firstRun({ asks: true })];
    // The same key twice in one turn, and a key recorded before: each second run fails alone.
    const clashes = [firstRun({ key: key('a') }), firstRun({ key: key('alone'), asks: true })];
    const runs = [...group, ...withPauses, ...clashes];
    const outcomes = await Promise.allSettled(runs.map((run) => writer.write(run)));
    const keptRuns = runs.filter((_, i) => outcomes[i]!.status === 'fulfilled');
    const failed = runs.filter((_, i) => outcomes[i]!.status === 'rejected');
    // Of the two runs with key 'a' in one turn either may come first; the one recorded before stays.
    assert.deepEqual(failed.map((run) => run.claim?.key).sort(), ['a', 'alone']);
    for (const outcome of outcomes) if (outcome.status === 'rejected') assert.equal((outcome.reason as { constraint?: string }).constraint, 'idempotency_keys_pkey');
    assert.deepEqual(await kept([alone, ...keptRuns]), { conversations: 6, executions: 6, pauses: 2 });
    assert.deepEqual(await kept(failed), { conversations: 0, executions: 0, pauses: 0 });
    const records = await db.selectFrom('idempotency_keys').select(['key', 'run_id']).where('principal_id', '=', principalId).orderBy('key').execute();
    const runWith = (name: string) => [alone, ...keptRuns].find((run) => run.claim?.key === name)!.execution.id;
    assert.deepEqual(
      records,
      ['a', 'alone', 'b', 'c'].map((name) => ({ key: name, run_id: runWith(name) })),
    );
  });

  it('gives each run of a failed group its own outcome: the one whose record exists fails alone, and keeps nothing', async () => {
    const writer = createFirstRunWriter(db);
    const taken = randomUUID();
    await writer.write(firstRun({ runId: taken }));
    const clash = firstRun({ runId: taken, asks: true });
    const others = [firstRun(), firstRun({ asks: true })];
    const outcomes = await Promise.allSettled([others[0]!, clash, others[1]!].map((run) => writer.write(run)));
    assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled']);
    const failure = (outcomes[1] as PromiseRejectedResult).reason as { code?: string; constraint?: string };
    assert.equal(failure.code, '23505');
    assert.equal(failure.constraint, 'executions_pkey');
    assert.deepEqual(await kept(others), { conversations: 2, executions: 2, pauses: 1 });
    assert.deepEqual(await kept([clash]), { conversations: 0, executions: 0, pauses: 0 });
  });

  it('keeps a fenced run only while the version it ran is its agent\'s latest; a stale one keeps nothing and the others of its group are kept', async () => {
    const writer = createFirstRunWriter(db);
    const agentName = uniqueAgentName('fenced');
    await publishAgent(db, agentName, `export default async (sys) => sys.say('v1')`);
    const latest = await publishAgent(db, agentName, `export default async (sys) => sys.say('v2')`);
    const current = firstRun({ fence: { agentName, version: latest } });
    const stale = firstRun({ fence: { agentName, version: latest - 1 }, asks: true });
    const unfenced = firstRun();
    const outcomes = await Promise.all([current, stale, unfenced].map((run) => writer.write(run)));
    assert.deepEqual(outcomes, ['committed', 'stale', 'committed']);
    assert.deepEqual(await kept([current, unfenced]), { conversations: 2, executions: 2, pauses: 0 });
    assert.deepEqual(await kept([stale]), { conversations: 0, executions: 0, pauses: 0 });
  });

  it('writes a run that ends alone (its prepared statement) with every column a group would write', async () => {
    const writer = createFirstRunWriter(db);
    const agentName = uniqueAgentName('alone');
    const latest = await publishAgent(db, agentName, `export default async (sys) => sys.say('v1')`);
    // Made at the same moment: the history entry carries its time.
    const now = new Date();
    const alone = firstRun({ fence: { agentName, version: latest }, now });
    const grouped = [firstRun({ fence: { agentName, version: latest }, now }), firstRun({ now })];
    assert.equal(await writer.write(alone), 'committed');
    assert.deepEqual(await Promise.all(grouped.map((run) => writer.write(run))), ['committed', 'committed']);
    // What is kept of a run but its ids and times (by different callers; the rows' times are the database's or the writes').
    const row = async (run: FirstRun) => {
      const conversation = await db.selectFrom('conversations').selectAll().where('id', '=', run.conversation.id).executeTakeFirstOrThrow();
      const execution = await db.selectFrom('executions').selectAll().where('id', '=', run.execution.id).executeTakeFirstOrThrow();
      const { id: _id, owner_id: _owner, created_at: created, last_used_at: used, ...conversationRest } = conversation;
      const { id: _run, convid: _convid, principal_id: _principal, request_id: _request, started_at: started, finished_at: finished, ...executionRest } = execution;
      assert.ok([created, used, started, finished].every((time) => time instanceof Date));
      return { conversation: conversationRest, execution: executionRest };
    };
    const aloneRow = await row(alone);
    assert.deepEqual(aloneRow, await row(grouped[0]!));
    assert.deepEqual(aloneRow.conversation.agent_vars, { writer: { n: 1 } });
  });

  it('writes runs that flush later (a child run in its parent\'s worker) as the others, fenced or not, a stale one keeping nothing, and no later statement commits unflushed', async () => {
    const writer = createFirstRunWriter(db, { flushLater: true });
    const agentName = uniqueAgentName('later');
    await publishAgent(db, agentName, `export default async (sys) => sys.say('v1')`);
    const latest = await publishAgent(db, agentName, `export default async (sys) => sys.say('v2')`);
    const current = firstRun({ fence: { agentName, version: latest } });
    const stale = firstRun({ fence: { agentName, version: latest - 1 } });
    const unfenced = firstRun();
    const asks = firstRun({ asks: true });
    assert.deepEqual(await Promise.all([current, stale, unfenced, asks].map((run) => writer.write(run))), ['committed', 'stale', 'committed', 'committed']);
    assert.deepEqual(await kept([current, unfenced, asks]), { conversations: 3, executions: 3, pauses: 1 });
    assert.deepEqual(await kept([stale]), { conversations: 0, executions: 0, pauses: 0 });
    // The setting is the statement's transaction's alone: every connection of the pool is as it was.
    const settings = await Promise.all([0, 1].map(() => sql<{ synchronous_commit: string }>`select current_setting('synchronous_commit') as synchronous_commit, pg_sleep(0.05)`.execute(db)));
    assert.deepEqual(settings.map((result) => result.rows[0]!.synchronous_commit), ['on', 'on']);
  });

  it('keeps nothing of a fenced run that ends alone on a version that is no longer the latest', async () => {
    const writer = createFirstRunWriter(db);
    const agentName = uniqueAgentName('alone');
    await publishAgent(db, agentName, `export default async (sys) => sys.say('v1')`);
    const latest = await publishAgent(db, agentName, `export default async (sys) => sys.say('v2')`);
    const stale = firstRun({ fence: { agentName, version: latest - 1 } });
    assert.equal(await writer.write(stale), 'stale');
    assert.deepEqual(await kept([stale]), { conversations: 0, executions: 0, pauses: 0 });
  });

  it('keeps nothing of a group without pauses that holds a stale run, then gives each run its own outcome', async () => {
    const agentName = uniqueAgentName('together');
    await publishAgent(db, agentName, `export default async (sys) => sys.say('v1')`);
    const latest = await publishAgent(db, agentName, `export default async (sys) => sys.say('v2')`);
    const current = firstRun({ fence: { agentName, version: latest } });
    const stale = firstRun({ fence: { agentName, version: latest - 1 } });
    const unfenced = firstRun();
    // The statement alone: all or nothing.
    assert.equal(await recordFirstRuns(db, [current, stale, unfenced]), 'stale');
    assert.deepEqual(await kept([current, stale, unfenced]), { conversations: 0, executions: 0, pauses: 0 });
    // Through the writer, which writes a group that kept nothing again run by run.
    const outcomes = await Promise.all([current, stale, unfenced].map((run) => createFirstRunWriter(db).write(run)));
    assert.deepEqual(outcomes, ['committed', 'stale', 'committed']);
    assert.deepEqual(await kept([current, unfenced]), { conversations: 2, executions: 2, pauses: 0 });
    assert.deepEqual(await kept([stale]), { conversations: 0, executions: 0, pauses: 0 });
  });

  it('stores what a group of runs writes exactly as given: quotes, backslashes, braces, NULL, newlines and non-Latin text', async () => {
    const odd = 'a "quoted" \\back\\slash {brace}, NULL, tab\t, line\n, é, 漢字, 😀';
    const runs = [firstRun(), firstRun(), firstRun()].map((run, i): FirstRun => ({
      ...run,
      state: { ...run.state!, agentVars: { writer: { odd, i } }, convVars: { odd } },
      execution: { ...run.execution, error_message: i === 1 ? null : odd, query: i === 2 ? null : odd, response: JSON.stringify({ output: [{ type: 'text', text: odd }] }) },
    }));
    assert.equal(await recordFirstRuns(db, runs), 'committed');
    for (const [i, run] of runs.entries()) {
      const conversation = await db.selectFrom('conversations').selectAll().where('id', '=', run.conversation.id).executeTakeFirstOrThrow();
      const execution = await db.selectFrom('executions').selectAll().where('id', '=', run.execution.id).executeTakeFirstOrThrow();
      assert.deepEqual(conversation.agent_vars, { writer: { odd, i } });
      assert.deepEqual(conversation.conv_vars, { odd });
      assert.equal(conversation.owner_id, run.conversation.ownerId);
      assert.equal(conversation.created_at.getTime(), run.conversation.now.getTime());
      assert.equal(execution.convid, run.conversation.id);
      assert.equal(execution.error_message, i === 1 ? null : odd);
      assert.equal(execution.query, i === 2 ? null : odd);
      assert.deepEqual(execution.response, { output: [{ type: 'text', text: odd }] });
      assert.equal(execution.background, false);
      assert.equal(execution.submitted_at, null);
    }
  });
});
