import assert from 'node:assert/strict';
import { insertUsageRecords, type UsageRecord } from '../../db/usage.repository.js';
import { execAgent, post } from '../helpers/api.js';
import { createBrowser } from '../helpers/browser.js';
import { changeAccountRole, createAccount, createUser, publishAgent, strongPassword, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { createTestClock } from '../helpers/test-clock.js';
import { waitFor } from '../helpers/wait.js';
import { utcDay, waitForUsageRows } from './report-helpers.js';

const day = 24 * 60 * 60 * 1000;

describe('usage report', () => {
  const clock = createTestClock();
  let stack: Stack;
  let admin: { key: string; id: string };
  const greeter = uniqueAgentName('greeter');
  const failer = uniqueAgentName('failer');

  before(async () => {
    stack = await startStack({}, { clock });
    admin = await createAccount(stack.runtime.db, 'admin');
    await publishAgent(stack.runtime.db, greeter, `export default async (sys) => { sys.say('hi'); }`);
    await publishAgent(stack.runtime.db, failer, `export default async (sys) => { sys.fail('x'); }`);
  });
  after(() => stack.close());

  const usageReport = (body: unknown, key = admin.key) => post(stack.url, '/api/admin/usageReport', body, { key });

  it('is for admins only: another role gets 403, an admin key or an admin session gets the report', async () => {
    for (const role of ['user', 'developer'] as const) {
      const other = await createAccount(stack.runtime.db, role);
      for (const path of ['/api/admin/usageReport', '/api/admin/errorReport']) {
        const res = await post(stack.url, path, {}, { key: other.key });
        assert.equal(res.status, 403, `${role} on ${path}`);
        assert.equal(res.body.error.code, 'forbidden');
      }
    }
    assert.equal((await post(stack.url, '/api/admin/usageReport', {})).status, 401);
    const ok = await usageReport({});
    assert.equal(ok.status, 200);
    assert.deepEqual(Object.keys(ok.body).sort(), ['rows', 'since', 'totals', 'truncated', 'until']);
    assert.equal(new Date(ok.body.until).getTime() - new Date(ok.body.since).getTime(), 30 * day, 'the last 30 days by default');

    const password = strongPassword();
    const user = await createUser(stack.runtime.db, { password, role: 'admin' });
    const browser = createBrowser(stack.url);
    await browser.post('/api/auth/login', { email: user.email, password });
    assert.equal((await browser.post('/api/admin/usageReport', {})).status, 200);
    assert.equal((await browser.post('/api/admin/errorReport', {})).status, 200);
  });

  it('totals calls and failed calls per account, role at the time and UTC day, and lists the rows newest first', async () => {
    const since = clock.now();
    const a = await createAccount(stack.runtime.db, 'user');
    const b = await createAccount(stack.runtime.db, 'user');
    await execAgent(stack.url, a.key, { agentName: greeter });
    await execAgent(stack.url, a.key, { agentName: greeter });
    await execAgent(stack.url, a.key, { agentName: failer });
    await execAgent(stack.url, a.key, { agentName: greeter, bogus: true });
    await execAgent(stack.url, b.key, { agentName: greeter });
    const dropsBefore = stack.bearerKeyCache.generation;
    await changeAccountRole(stack.runtime.db, a.id, 'developer');
    // The web process reads the new role once the change message has dropped the cached account (milliseconds).
    await waitFor(() => stack.bearerKeyCache.generation > dropsBefore, 5000, 'the role change to reach the web process');
    await post(stack.url, '/api/user/getUserProfile', {}, { key: a.key });
    clock.advance(day);
    await execAgent(stack.url, a.key, { agentName: greeter });
    await waitForUsageRows(stack.runtime.db, [a.id, b.id], 7);

    const res = await usageReport({ since: since.toISOString(), until: clock.now().toISOString() });
    assert.equal(res.status, 200);
    const mine = (list: any[]) => list.filter((entry) => entry.serviceAccountId === a.id || entry.serviceAccountId === b.id);
    const rows = mine(res.body.rows);
    assert.equal(rows.length, 7);
    assert.deepEqual(rows[0], { ...rows[0], serviceAccountId: a.id, name: a.name, role: 'developer', endpoint: '/api/exec/execAgent', agentName: greeter, resultCode: 'success', httpStatus: 200 });
    assert.deepEqual(Object.keys(rows[0]).sort(), ['agentName', 'at', 'durationMs', 'endpoint', 'httpStatus', 'name', 'resultCode', 'role', 'serviceAccountId']);
    assert.deepEqual(rows.map((r) => r.at), rows.map((r) => r.at).sort().reverse(), 'newest first');

    const expected = new Map<string, { calls: number; failed: number }>();
    for (const r of rows) {
      const group = `${r.serviceAccountId} ${r.name} ${r.role} ${utcDay(r.at)}`;
      const total = expected.get(group) ?? { calls: 0, failed: 0 };
      total.calls++;
      if ((r.resultCode !== null && !['success', 'ask'].includes(r.resultCode)) || r.httpStatus >= 400) total.failed++;
      expected.set(group, total);
    }
    const totals = mine(res.body.totals);
    assert.deepEqual(
      new Map(totals.map((t) => [`${t.serviceAccountId} ${t.name} ${t.role} ${t.day}`, { calls: t.calls, failed: t.failed }])),
      expected,
    );
    const sum = (accountId: string, role: string, field: 'calls' | 'failed') =>
      totals.filter((t) => t.serviceAccountId === accountId && t.role === role).reduce((n, t) => n + t[field], 0);
    assert.deepEqual([sum(a.id, 'user', 'calls'), sum(a.id, 'user', 'failed')], [4, 2], 'a failCommand and a 400 count as failed');
    assert.deepEqual([sum(a.id, 'developer', 'calls'), sum(a.id, 'developer', 'failed')], [2, 0]);
    assert.deepEqual([sum(b.id, 'user', 'calls'), sum(b.id, 'user', 'failed')], [1, 0]);
    const developerDays = totals.filter((t) => t.serviceAccountId === a.id && t.role === 'developer').map((t) => t.day);
    assert.equal(new Set(developerDays).size, 2, 'calls a day apart are totalled on separate days');
    assert.ok(totals.every((t) => /^\d{4}-\d{2}-\d{2}$/.test(t.day)));
  });

  it('covers only calls between since and until', async () => {
    const account = await createAccount(stack.runtime.db, 'user');
    const first = clock.now();
    await execAgent(stack.url, account.key, { agentName: greeter });
    clock.advance(2 * day);
    await execAgent(stack.url, account.key, { agentName: failer });
    await waitForUsageRows(stack.runtime.db, [account.id], 2);
    const middle = new Date(first.getTime() + day);
    const agentsIn = async (body: object) => {
      const res = await usageReport(body);
      assert.equal(res.status, 200);
      return res.body.rows.filter((r: any) => r.serviceAccountId === account.id).map((r: any) => r.agentName);
    };
    assert.deepEqual(await agentsIn({ since: first.toISOString(), until: clock.now().toISOString() }), [failer, greeter]);
    assert.deepEqual(await agentsIn({ since: middle.toISOString(), until: clock.now().toISOString() }), [failer]);
    assert.deepEqual(await agentsIn({ since: first.toISOString(), until: middle.toISOString() }), [greeter]);
    assert.deepEqual(await agentsIn({ until: middle.toISOString() }), [greeter], 'since defaults to 30 days before until');
  });

  it('refuses since after until, a date that is not an ISO date-time, and unknown fields', async () => {
    const now = clock.now();
    const later = new Date(now.getTime() + 60_000).toISOString();
    for (const path of ['/api/admin/usageReport', '/api/admin/errorReport']) {
      const reversed = await post(stack.url, path, { since: later, until: now.toISOString() }, { key: admin.key });
      assert.equal(reversed.status, 400);
      assert.equal(reversed.body.error.code, 'invalidRequest');
      assert.ok(reversed.body.error.details.fields.since);
      const bad = await post(stack.url, path, { since: 'yesterday' }, { key: admin.key });
      assert.equal(bad.status, 400);
      assert.ok(bad.body.error.details.fields.since);
      const unknown = await post(stack.url, path, { sinse: now.toISOString() }, { key: admin.key });
      assert.equal(unknown.status, 400);
      assert.ok(unknown.body.error.details.fields.sinse);
    }
  });

  it('answers at most 1000 rows, saying truncated, while the totals count every call', async () => {
    const account = await createAccount(stack.runtime.db, 'user');
    const start = Date.parse('2001-03-04T00:00:00Z');
    const records: UsageRecord[] = Array.from({ length: 1001 }, (_, i) => ({
      serviceAccountId: account.id,
      name: account.name,
      role: 'user',
      endpoint: '/api/exec/execAgent',
      agentName: greeter,
      resultCode: 'success',
      httpStatus: 200,
      durationMs: 5,
      at: new Date(start + i * 1000),
    }));
    await insertUsageRecords(stack.runtime.db, records);
    const res = await usageReport({ since: '2001-03-04T00:00:00Z', until: '2001-03-05T00:00:00Z' });
    assert.equal(res.body.rows.length, 1000);
    assert.equal(res.body.truncated, true);
    assert.equal(res.body.rows[0].at, new Date(start + 1000 * 1000).toISOString(), 'the newest rows are kept');
    assert.deepEqual(res.body.totals, [{ serviceAccountId: account.id, name: account.name, role: 'user', day: '2001-03-04', calls: 1001, failed: 0 }]);
    const whole = await usageReport({ since: '2001-03-04T00:00:00Z', until: new Date(start + 999_000).toISOString() });
    assert.equal(whole.body.rows.length, 1000);
    assert.equal(whole.body.truncated, false);
  });
});
