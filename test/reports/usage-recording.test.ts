import assert from 'node:assert/strict';
import { createDb } from '../../db/database.js';
import { execAgent, post } from '../helpers/api.js';
import { createBrowser } from '../helpers/browser.js';
import { changeAccountRole, createAccount, createUser, publishAgent, strongPassword, uniqueAgentName } from '../helpers/fixtures.js';
import { openStream } from '../helpers/sse.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { testEnv } from '../helpers/test-env.js';
import { waitFor } from '../helpers/wait.js';
import { usageRowsOf, waitForUsageRows, type UsageRow } from './report-helpers.js';

describe('usage recording', () => {
  let stack: Stack;
  const greeter = uniqueAgentName('greeter');
  const failer = uniqueAgentName('failer');
  const slow = uniqueAgentName('slow');

  before(async () => {
    stack = await startStack();
    await publishAgent(stack.runtime.db, greeter, `export default async (sys) => { sys.say('hi'); }`);
    await publishAgent(stack.runtime.db, failer, `export default async (sys) => { sys.fail('x'); }`);
    await publishAgent(stack.runtime.db, slow, `export default async (sys) => { await sys.sleep(300); sys.say('done'); }`);
  });
  after(() => stack.close());

  it('records every bearer call with account, role, endpoint, agentName, resultCode, status, duration and time', async () => {
    const account = await createAccount(stack.runtime.db, 'developer');
    const before = new Date();
    assert.equal((await execAgent(stack.url, account.key, { agentName: greeter })).body.resultCode, 'success');
    assert.equal((await execAgent(stack.url, account.key, { agentName: failer })).body.resultCode, 'failCommand');
    assert.equal((await execAgent(stack.url, account.key, { agentName: greeter, bogus: 1 })).status, 400);
    assert.equal((await post(stack.url, '/api/user/getUserProfile', {}, { key: account.key })).status, 200);
    assert.equal((await execAgent(stack.url, account.key, { agentName: slow })).body.resultCode, 'success');
    const after = new Date();

    const rows = await waitForUsageRows(stack.runtime.db, [account.id], 5);
    assert.deepEqual(
      rows.map((r) => [r.account_name, r.role, r.endpoint, r.agent_name, r.result_code, r.http_status]),
      [
        [account.name, 'developer', '/api/exec/execAgent', greeter, 'success', 200],
        [account.name, 'developer', '/api/exec/execAgent', failer, 'failCommand', 200],
        [account.name, 'developer', '/api/exec/execAgent', greeter, null, 400],
        [account.name, 'developer', '/api/user/getUserProfile', null, null, 200],
        [account.name, 'developer', '/api/exec/execAgent', slow, 'success', 200],
      ],
    );
    for (const row of rows) {
      assert.ok(row.at >= new Date(before.getTime() - 1) && row.at <= after, `at ${row.at.toISOString()} is within the calls`);
      assert.ok(Number.isInteger(row.duration_ms) && row.duration_ms >= 0 && row.duration_ms <= after.getTime() - before.getTime());
    }
    assert.ok(rows[4]!.duration_ms >= 300, `the slow call took ${rows[4]!.duration_ms} ms`);
  });

  it('keeps the role an account had at the time of each call', async () => {
    const account = await createAccount(stack.runtime.db, 'user');
    await execAgent(stack.url, account.key, { agentName: greeter });
    await waitForUsageRows(stack.runtime.db, [account.id], 1);
    await changeAccountRole(stack.runtime.db, account.id, 'admin');
    // The web process hears of the change a moment after it is announced (README: bearer keys are
    // cached); an admin-only endpoint stops refusing the key once it has.
    const adminOnly = async () => (await post(stack.url, '/api/admin/errorReport', {}, { key: account.key })).status !== 403;
    await waitFor(adminOnly, 2000, 'the web process to see the new role');
    await execAgent(stack.url, account.key, { agentName: greeter });
    let calls: UsageRow[] = [];
    await waitFor(async () => (calls = (await usageRowsOf(stack.runtime.db, [account.id])).filter((r) => r.endpoint === '/api/exec/execAgent')).length >= 2, 5000, 'two execAgent usage rows');
    assert.deepEqual(calls.map((r) => r.role), ['user', 'admin']);
  });

  it('records a streamed call when its stream ends, with the resultCode of its end event', async () => {
    const account = await createAccount(stack.runtime.db, 'user');
    const ok = await openStream(stack.url, '/api/exec/execAgent', { agentName: slow, stream: true }, { key: account.key });
    assert.equal((await ok.done).at(-1)?.data.resultCode, 'success');
    const failed = await openStream(stack.url, '/api/exec/execAgent', { agentName: failer, stream: true }, { key: account.key });
    assert.equal((await failed.done).at(-1)?.data.resultCode, 'failCommand');
    const rows = await waitForUsageRows(stack.runtime.db, [account.id], 2);
    assert.deepEqual(
      rows.map((r) => [r.agent_name, r.result_code, r.http_status]),
      [
        [slow, 'success', 200],
        [failer, 'failCommand', 200],
      ],
    );
    assert.ok(rows[0]!.duration_ms >= 300, `recorded at the end of the stream (${rows[0]!.duration_ms} ms), not when it started`);
  });

  it('records neither cookie calls nor calls whose key is refused', async () => {
    const password = strongPassword();
    const user = await createUser(stack.runtime.db, { password, role: 'admin' });
    const browser = createBrowser(stack.url);
    assert.equal((await browser.post('/api/auth/login', { email: user.email, password })).status, 200);
    assert.equal((await browser.post('/api/user/getUserProfile', {})).status, 200);
    const since = new Date();
    const refused = await post(stack.url, '/api/user/getUserProfile', {}, { key: 'ak_0123456789abcdef_not-a-real-secret-at-all-0000000000000000000' });
    assert.equal(refused.status, 401);
    // Rows are written in the order of the calls: once a later call's row is there, theirs would be too.
    const sentinel = await createAccount(stack.runtime.db, 'user');
    await post(stack.url, '/api/user/getUserProfile', {}, { key: sentinel.key });
    await waitForUsageRows(stack.runtime.db, [sentinel.id], 1);
    assert.deepEqual(await usageRowsOf(stack.runtime.db, [user.id]), []);
    const unauthenticated = await stack.runtime.db.selectFrom('usage_records').select('id').where('at', '>=', since).where('http_status', '=', 401).execute();
    assert.deepEqual(unauthenticated, []);
  });

  it('loses no row on a clean shutdown, including a stream still open when the stop begins', async () => {
    const other = await startStack();
    const account = await createAccount(other.runtime.db, 'user');
    for (let i = 0; i < 3; i++) await post(other.url, '/api/user/getUserProfile', {}, { key: account.key });
    const stream = await openStream(other.url, '/api/exec/execAgent', { agentName: slow, stream: true }, { key: account.key });
    await stream.next((e) => e.event === 'start');
    await other.close();
    assert.equal((await stream.done).at(-1)?.event, 'end');

    const db = createDb(testEnv.DATABASE_URL!, 1);
    try {
      const rows = await usageRowsOf(db, [account.id]);
      assert.deepEqual(
        rows.map((r) => [r.endpoint, r.result_code]),
        [
          ['/api/user/getUserProfile', null],
          ['/api/user/getUserProfile', null],
          ['/api/user/getUserProfile', null],
          ['/api/exec/execAgent', 'success'],
        ],
      );
    } finally {
      await db.destroy();
    }
  });
});
