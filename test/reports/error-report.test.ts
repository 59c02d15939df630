import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { execAgent, post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

describe('error report', () => {
  let stack: Stack;
  let adminKey: string;
  let caller: { key: string; id: string };
  const greeter = uniqueAgentName('greeter');
  const failer = uniqueAgentName('failer');
  const asker = uniqueAgentName('asker');

  before(async () => {
    stack = await startStack();
    adminKey = (await createAccount(stack.runtime.db, 'admin')).key;
    caller = await createAccount(stack.runtime.db, 'user');
    await publishAgent(stack.runtime.db, greeter, `export default async (sys) => { sys.say('hi'); }`);
    await publishAgent(stack.runtime.db, failer, `export default async (sys) => { sys.fail('x'); }`);
    await publishAgent(stack.runtime.db, asker, `export default async (sys) => { await sys.ask({ message: 'Name?', inputs: [{ name: 'n', type: 'str' }] }); }`);
  });
  after(() => stack.close());

  const errorReport = (body: unknown) => post(stack.url, '/api/admin/errorReport', body, { key: adminKey });

  it('lists a run that ended failCommand with its message, and neither success nor ask runs', async () => {
    const since = new Date();
    const ok = await execAgent(stack.url, caller.key, { agentName: greeter });
    const asked = await execAgent(stack.url, caller.key, { agentName: asker });
    const failed = await execAgent(stack.url, caller.key, { agentName: failer });
    assert.deepEqual([ok.body.resultCode, asked.body.resultCode, failed.body.resultCode], ['success', 'ask', 'failCommand']);

    const res = await errorReport({ since: since.toISOString() });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['rows', 'since', 'totals', 'truncated', 'until']);
    assert.deepEqual(res.body.totals, [{ day: new Date().toISOString().slice(0, 10), resultCode: 'failCommand', count: 1 }]);
    assert.equal(res.body.truncated, false);
    const convids = res.body.rows.map((r: any) => r.convid);
    assert.ok(!convids.includes(ok.body.convid), 'no success run');
    assert.ok(!convids.includes(asked.body.convid), 'no ask run');
    const row = res.body.rows.find((r: any) => r.convid === failed.body.convid);
    assert.ok(row, 'the failCommand run is listed');
    assert.deepEqual(Object.keys(row).sort(), ['agentName', 'at', 'convid', 'durationMs', 'executionId', 'message', 'principalId', 'principalKind', 'resultCode']);
    assert.equal(row.agentName, failer);
    assert.equal(row.resultCode, 'failCommand');
    assert.equal(row.message, 'x');
    assert.equal(row.principalKind, 'serviceAccount');
    assert.equal(row.principalId, caller.id);
    assert.match(row.executionId, /^[0-9a-f-]{36}$/);
    assert.ok(typeof row.durationMs === 'number' && row.durationMs >= 0);
    assert.ok(new Date(row.at) >= since && new Date(row.at) <= new Date());
  });

  it('covers only runs that finished between since and until, newest first', async () => {
    const first = await execAgent(stack.url, caller.key, { agentName: failer });
    const middle = new Date();
    const second = await execAgent(stack.url, caller.key, { agentName: failer });
    const convidsIn = async (body: object) => {
      const res = await errorReport(body);
      assert.equal(res.status, 200);
      return res.body.rows.map((r: any) => r.convid).filter((c: string) => c === first.body.convid || c === second.body.convid);
    };
    assert.deepEqual(await convidsIn({}), [second.body.convid, first.body.convid]);
    assert.deepEqual(await convidsIn({ since: middle.toISOString() }), [second.body.convid]);
    assert.deepEqual(await convidsIn({ until: middle.toISOString() }), [first.body.convid]);
  });

  it('answers at most 1000 rows, newest first, saying truncated', async () => {
    const start = Date.parse('2001-05-06T00:00:00Z');
    const executions = Array.from({ length: 1001 }, (_, i) => ({
      id: randomUUID(),
      convid: randomUUID(),
      agent_name: failer,
      agent_version: 1,
      principal_kind: 'serviceAccount' as const,
      principal_id: caller.id,
      request_id: null,
      result_code: 'timedOut' as const,
      error_message: 'too slow',
      response: '{}',
      started_at: new Date(start + i * 1000),
      finished_at: new Date(start + i * 1000),
      duration_ms: 0,
    }));
    await stack.runtime.db.insertInto('executions').values(executions).execute();
    const res = await errorReport({ since: '2001-05-06T00:00:00Z', until: '2001-05-07T00:00:00Z' });
    assert.equal(res.body.rows.length, 1000);
    assert.equal(res.body.truncated, true);
    assert.equal(res.body.rows[0].executionId, executions[1000]!.id);
  });
});
