import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { AgentexecClient, ForbiddenError } from '../../clients/typescript/src/index.js';
import type { ResultCode } from '../../shared/api.js';
import { insertExecution } from '../../db/executions.repository.js';
import { selectRunPage, type RunListFilter } from '../../db/run-list.repository.js';
import { post } from '../helpers/api.js';
import { createAccount, createUser, publishAgent, successRecord, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

/** The console's list of runs (DESIGN §18), /api/admin/listRuns, through the HTTP API and the client. */
describe('admin: list of runs', () => {
  let stack: Stack;
  let admin: { key: string; id: string };
  let caller: { key: string; id: string; name: string };
  const agent = uniqueAgentName('listed');
  const seeded = uniqueAgentName('seeded');
  /** Ids of the seeded runs, newest first by (started_at, id). */
  let seededOrder: string[] = [];

  const listRuns = (body: unknown, key = admin.key) => post(stack.url, '/api/admin/listRuns', body, { key });

  before(async () => {
    stack = await startStack();
    admin = await createAccount(stack.runtime.db, 'admin');
    caller = await createAccount(stack.runtime.db, 'user');
    await publishAgent(stack.runtime.db, agent, `export default async (sys) => { if (sys.inputs.fail) throw new TypeError('no'); sys.say('hi'); }`);
    // Two real runs through the API, then 25 records with equal starts (ties broken by id) and starts
    // a microsecond apart (finer than a JavaScript Date), so the cursor must keep PostgreSQL's precision.
    assert.equal((await post(stack.url, '/api/exec/execAgent', { agentName: agent }, { key: caller.key })).status, 200);
    assert.equal((await post(stack.url, '/api/exec/execAgent', { agentName: agent, inputs: { fail: true } }, { key: caller.key })).status, 200);
    // Other tests' runs share the database: the seeded ones start a month ahead, in a window of their own.
    const base = new Date(Date.now() + 30 * 86_400_000);
    const codes: ResultCode[] = ['success', 'errorInAgent', 'timedOut'];
    for (let i = 0; i < 25; i++) {
      const record = { ...successRecord(randomUUID()), agent_name: seeded, result_code: codes[i % 3]!, principal_id: i % 2 ? caller.id : admin.id };
      assert.ok(await insertExecution(stack.runtime.db, { ...record, started_at: new Date(base.getTime() + Math.floor(i / 5) * 1000) }));
    }
    await sql`update executions set started_at = started_at + (((('x' || substr(id::text, 1, 2))::bit(8))::int % 3) * interval '1 microsecond') where agent_name = ${seeded}`.execute(stack.runtime.db);
    seededOrder = (await stack.runtime.db.selectFrom('executions').select('id').where('agent_name', '=', seeded).orderBy('started_at', 'desc').orderBy('id', 'desc').execute()).map((r) => r.id);
  });
  after(() => stack.close());

  /** Every run the filter lists, page by page; asserts each page's size and that the last has no cursor. */
  async function readAllPages(filter: Record<string, unknown>, limit: number): Promise<{ runId: string; startedAt: string }[]> {
    const runs: { runId: string; startedAt: string }[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 1000; pages++) {
      const res = await listRuns({ ...filter, limit, ...(cursor ? { cursor } : {}) });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      runs.push(...res.body.runs);
      if (res.body.nextCursor === null) return runs;
      assert.equal(res.body.runs.length, limit);
      cursor = res.body.nextCursor;
    }
    throw new Error('paging did not end');
  }

  it('lists every run once, newest first, across pages of any size', async () => {
    for (const limit of [1, 4, 25, 100]) assert.deepEqual((await readAllPages({ agentName: seeded }, limit)).map((r) => r.runId), seededOrder, `limit ${limit}`);
    const first = await listRuns({ agentName: seeded });
    assert.equal(first.body.runs.length, 25);
    assert.equal(first.body.nextCursor, null);
  });

  it('answers what a run is: agent, account with its name, result code, times and duration', async () => {
    const res = await listRuns({ agentName: agent });
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.runs.map((r: { resultCode: string }) => r.resultCode),
      ['errorInAgent', 'success'],
    );
    const [failed] = res.body.runs;
    assert.equal(failed.agentName, agent);
    assert.deepEqual(failed.account, { kind: 'serviceAccount', id: caller.id, name: caller.name });
    assert.match(failed.errorMessage, /no/);
    assert.equal(failed.agentVersion, 1);
    assert.equal(failed.background, false);
    assert.ok(Date.parse(failed.finishedAt) >= Date.parse(failed.startedAt));
    assert.equal(typeof failed.durationMs, 'number');
    assert.ok(!('response' in failed) && !('output' in failed), 'no output in the list');
  });

  it('filters by agent, account, result code and start time, alone and together', async () => {
    const ids = async (filter: Record<string, unknown>) => (await readAllPages(filter, 4)).map((r) => r.runId);
    const seededRows = await stack.runtime.db.selectFrom('executions').selectAll().where('agent_name', '=', seeded).orderBy('started_at', 'desc').orderBy('id', 'desc').execute();
    const expect = (keep: (row: (typeof seededRows)[number]) => boolean) => seededRows.filter(keep).map((r) => r.id);

    assert.deepEqual(await ids({ agentName: seeded, resultCode: 'timedOut' }), expect((r) => r.result_code === 'timedOut'));
    assert.deepEqual(await ids({ agentName: seeded, account: { kind: 'serviceAccount', id: admin.id } }), expect((r) => r.principal_id === admin.id));
    const byCaller = await ids({ account: { kind: 'serviceAccount', id: caller.id } });
    assert.equal(byCaller.length, 2 + expect((r) => r.principal_id === caller.id).length);
    assert.deepEqual(await ids({ account: { kind: 'user', id: caller.id } }), []);
    const errorInAgent = await ids({ resultCode: 'errorInAgent', account: { kind: 'serviceAccount', id: caller.id } });
    assert.equal(errorInAgent.length, 1 + expect((r) => r.result_code === 'errorInAgent' && r.principal_id === caller.id).length);
    // The seeded starts are 5 seconds, 5 runs each; from is inclusive, to exclusive.
    const from = seededRows.at(-1)!.started_at;
    const second = new Date(Math.floor(from.getTime() / 1000) * 1000 + 1000);
    const third = new Date(second.getTime() + 2000);
    assert.deepEqual(await ids({ agentName: seeded, from: second.toISOString(), to: third.toISOString() }), expect((r) => r.started_at >= second && r.started_at < third));
    assert.equal((await ids({ agentName: seeded, from: second.toISOString(), to: third.toISOString() })).length, 10);
    assert.deepEqual(await ids({ agentName: 'no-such-agent' }), []);
  });

  it('answers 400 naming the field for bad input and unknown filters', async () => {
    const cursor = (await listRuns({ limit: 1 })).body.nextCursor as string;
    const cases: [unknown, string][] = [
      [{ limit: 0 }, 'limit'],
      [{ limit: 101 }, 'limit'],
      [{ limit: 2.5 }, 'limit'],
      [{ limit: '10' }, 'limit'],
      [{ agent: 'x' }, 'agent'],
      [{ status: 'ended' }, 'status'],
      [{ resultCode: 'fine' }, 'resultCode'],
      [{ account: { kind: 'serviceAccount', id: 'not-a-uuid' } }, 'account.id'],
      [{ account: { kind: 'robot', id: randomUUID() } }, 'account.kind'],
      [{ from: 'yesterday' }, 'from'],
      [{ from: '2026-01-02T00:00:00Z', to: '2026-01-01T00:00:00Z' }, 'to'],
      [{ cursor: 'garbage!' }, 'cursor'],
      [{ cursor: Buffer.from('2026-01-01T00:00:00.000000Z|x').toString('base64url') }, 'cursor'],
      [{ cursor: cursor.slice(0, -2) }, 'cursor'],
    ];
    for (const [body, field] of cases) {
      const res = await listRuns(body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error.code, 'invalidRequest');
      assert.ok(res.body.error.details.fields[field], `${JSON.stringify(body)} → ${JSON.stringify(res.body)}`);
    }
    const both = await listRuns({ agent: 'x', when: 'now' });
    assert.deepEqual(Object.keys(both.body.error.details.fields).sort(), ['agent', 'when']);
  });

  it('answers 403 to callers that are not admins, and 401 without a credential', async () => {
    const developer = await createAccount(stack.runtime.db, 'developer');
    for (const key of [caller.key, developer.key]) {
      const res = await listRuns({}, key);
      assert.equal(res.status, 403);
      assert.equal(res.body.error.code, 'forbidden');
    }
    assert.equal((await post(stack.url, '/api/admin/listRuns', {})).status, 401);
    await assert.rejects(new AgentexecClient({ baseUrl: stack.url, apiKey: caller.key, maxRetries: 0 }).listRuns(), ForbiddenError);
  });

  it('pages through the TypeScript client', async () => {
    const client = new AgentexecClient({ baseUrl: stack.url, apiKey: admin.key });
    const first = await client.listRuns({ agentName: seeded, resultCode: 'success' }, { limit: 5 });
    const second = await client.listRuns({ agentName: seeded, resultCode: 'success' }, { limit: 5, cursor: first.nextCursor! });
    const expected = (await stack.runtime.db.selectFrom('executions').select('id').where('agent_name', '=', seeded).where('result_code', '=', 'success').orderBy('started_at', 'desc').orderBy('id', 'desc').execute()).map((r) => r.id);
    assert.deepEqual([...first.runs, ...second.runs].map((r) => r.runId), expected);
    assert.equal(second.nextCursor, null);
  });

  it('reads each filter from an index, in order, without a sort or a scan of every record', async () => {
    const db = stack.runtime.db;
    const user = await createUser(db);
    // Enough records that a sequential scan would be the planner's choice were there no fitting index.
    await sql`
      insert into executions (id, convid, agent_name, agent_version, principal_kind, principal_id, request_id, result_code, error_message, response, started_at, finished_at, duration_ms)
      select gen_random_uuid(), gen_random_uuid(), 'bulk-' || (n % 50), 1, 'user', case when n % 100 = 0 then ${user.id}::uuid else gen_random_uuid() end, null,
             (array['success','ask','errorInAgent','timedOut','callFailed','stopped'])[1 + n % 6], null, '{}', now() - n * interval '1 second', now() - n * interval '1 second', 5
      from generate_series(1, 20000) n`.execute(db);
    await sql`analyze executions`.execute(db);
    const filters: [RunListFilter, string][] = [
      [{}, 'executions_started_idx'],
      [{ agentName: 'bulk-7' }, 'executions_agent_started_idx'],
      [{ account: { kind: 'user', id: user.id } }, 'executions_principal_started_idx'],
      [{ resultCode: 'stopped' }, 'executions_'],
      [{ from: new Date(Date.now() - 3_600_000), to: new Date(Date.now() - 1_800_000) }, 'executions_started_idx'],
    ];
    const after = { startedAt: new Date(Date.now() - 600_000).toISOString().replace('Z', '000Z'), id: randomUUID() };
    for (const [filter, index] of filters) {
      for (const page of [{ limit: 51 }, { limit: 51, after }]) {
        const plan = (await selectRunPage(db, filter, page).explain()).map((row) => String(row['QUERY PLAN'])).join('\n');
        assert.doesNotMatch(plan, /Seq Scan on executions/, plan);
        assert.doesNotMatch(plan, /\bSort\b/, plan);
        assert.match(plan, new RegExp(`Index Scan using ${index}`), plan);
      }
    }
    // Agent and result code together read their own index (migration 0017), not the agent's runs one by
    // one; with a few hundred matches here the planner may sort them, which is cheap at that size.
    const plan = (await selectRunPage(db, { agentName: 'bulk-7', resultCode: 'stopped' }, { limit: 51 }).explain()).map((row) => String(row['QUERY PLAN'])).join('\n');
    assert.match(plan, /Index Scan on executions_agent_result_started_idx|Index Scan using executions_agent_result_started_idx/, plan);
    assert.doesNotMatch(plan, /Seq Scan on executions/, plan);
  });
});
