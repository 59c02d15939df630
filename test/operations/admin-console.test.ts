import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { generateWebhookSecret } from '../../shared/webhook-signature.js';
import { insertExecution } from '../../db/executions.repository.js';
import { upsertWebhook } from '../../db/webhooks.repository.js';
import { post } from '../helpers/api.js';
import { createAccount, createUser, publishAgent, successRecord, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { waitFor } from '../helpers/wait.js';

/** The console's Accounts, Secrets, Webhooks and Reports endpoints (DESIGN §18), through the HTTP API. */
describe('admin: console endpoints', function () {
  this.timeout(60_000);
  let stack: Stack;
  let admin: { key: string; id: string; name: string };
  let developer: { key: string; id: string; name: string };
  let receiver: { server: Server; url: string; port: number; answers: number[]; received: { webhookId: string; runId: string }[] };

  const call = (path: string, body: unknown, key = admin.key) => post(stack.url, `/api/admin/${path}`, body, { key });
  const profile = (key: string) => post(stack.url, '/api/user/getUserProfile', {}, { key });

  before(async () => {
    receiver = await startReceiver();
    stack = await startStack({ WEBHOOK_ALLOW: `127.0.0.1:${receiver.port}` });
    admin = await createAccount(stack.runtime.db, 'admin');
    developer = await createAccount(stack.runtime.db, 'developer');
  });
  after(async () => {
    await stack.close();
    receiver.server.close();
  });

  describe('accounts', () => {
    it('creates a service account whose key works, lists it without the key, rotates the key and deletes the account', async () => {
      const name = `console-${randomUUID().slice(0, 8)}`;
      const created = await call('createServiceAccount', { name, role: 'developer', plan: 'paid' });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.deepEqual({ name: created.body.name, role: created.body.role, plan: created.body.plan }, { name, role: 'developer', plan: 'paid' });
      const firstKey = created.body.key as string;
      assert.equal((await profile(firstKey)).body.callName, name);

      const listed = await call('listAccounts', {});
      assert.equal(listed.status, 200);
      const entry = listed.body.serviceAccounts.find((a: { name: string }) => a.name === name);
      assert.deepEqual(Object.keys(entry).sort(), ['createdAt', 'id', 'keyRotatedAt', 'name', 'plan', 'role']);
      // The secret is all after the second '_': base64url may hold '_' itself, and a fragment of it may be anywhere.
      assert.ok(!JSON.stringify(listed.body).includes(firstKey.split('_').slice(2).join('_')), 'no key in the list');

      const rotated = await call('rotateKey', { name });
      assert.equal(rotated.status, 200);
      assert.notEqual(rotated.body.key, firstKey);
      assert.equal((await profile(firstKey)).status, 401, 'the old key stops working at once');
      assert.equal((await profile(rotated.body.key)).status, 200);

      assert.equal((await call('deleteServiceAccount', { name })).status, 200);
      assert.equal((await profile(rotated.body.key)).status, 401);
      assert.equal((await call('deleteServiceAccount', { name })).status, 404);
    });

    it('changes the role of a service account (its cached key included) and of a user', async () => {
      const account = await createAccount(stack.runtime.db, 'user');
      assert.equal((await profile(account.key)).body.role, 'user');
      const changed = await call('setRole', { name: account.name, role: 'developer' });
      assert.deepEqual(changed.body, { kind: 'serviceAccount', id: account.id, name: account.name, role: 'developer' });
      assert.equal((await profile(account.key)).body.role, 'developer');

      const email = `console-${randomUUID().slice(0, 8)}@example.test`;
      const user = await call('createUser', { email: email.toUpperCase(), callName: 'Console User' });
      assert.equal(user.status, 200, JSON.stringify(user.body));
      assert.deepEqual({ email: user.body.email, role: user.body.role, plan: user.body.plan, callName: user.body.callName }, { email, role: 'user', plan: 'free', callName: 'Console User' });
      assert.equal((await call('setRole', { email, role: 'admin' })).body.role, 'admin');
      const listed = await call('listAccounts', {});
      assert.equal(listed.body.users.find((u: { email: string }) => u.email === email).role, 'admin');
      const row = await stack.runtime.db.selectFrom('users').select('password_hash').where('email', '=', email).executeTakeFirstOrThrow();
      assert.equal(row.password_hash, null, 'the user sets a password by email code');
    });

    it('answers 400 with the field for a taken name or email, an unknown field or role, and changes nothing', async () => {
      const taken = await call('createServiceAccount', { name: developer.name });
      assert.equal(taken.status, 400);
      assert.ok(taken.body.error.details.fields.name);
      const user = await createUser(stack.runtime.db);
      assert.ok((await call('createUser', { email: user.email })).body.error.details.fields.email);
      const unknown = await call('createServiceAccount', { name: 'x-unknown-field', keyId: 'mine' });
      assert.deepEqual(unknown.body.error.details.fields, { keyId: 'is not a known field' });
      assert.ok((await call('setRole', { name: developer.name, role: 'root' })).body.error.details.fields.role);
      assert.ok((await call('setRole', { name: developer.name, email: user.email, role: 'user' })).body.error.details.fields.name);
      assert.ok((await call('createUser', { email: 'not an address' })).body.error.details.fields.email);
      const listed = await call('listAccounts', {});
      assert.equal(listed.body.serviceAccounts.filter((a: { name: string }) => a.name === 'x-unknown-field').length, 0);
      assert.equal(listed.body.serviceAccounts.find((a: { name: string }) => a.name === developer.name).role, 'developer');
    });

    it('answers 404 for an unknown account', async () => {
      for (const [path, body] of [
        ['rotateKey', { name: 'no-such-account' }],
        ['setRole', { name: 'no-such-account', role: 'user' }],
        ['setRole', { email: 'nobody@example.test', role: 'user' }],
      ] as const) {
        assert.equal((await call(path, body)).status, 404, path);
      }
    });
  });

  it('refuses every console endpoint to a caller who is not an admin (403), and changes nothing', async () => {
    const name = `never-${randomUUID().slice(0, 8)}`;
    const bodies: Record<string, unknown> = {
      listAccounts: {},
      createServiceAccount: { name },
      rotateKey: { name: developer.name },
      deleteServiceAccount: { name: developer.name },
      createUser: { email: `${name}@example.test` },
      setRole: { name: developer.name, role: 'admin' },
      listAllSecrets: {},
      listWebhooks: {},
      listWebhookDeliveries: {},
      redeliverWebhook: { webhookId: randomUUID() },
    };
    for (const [path, body] of Object.entries(bodies)) {
      const res = await call(path, body, developer.key);
      assert.equal(res.status, 403, path);
      assert.equal(res.body.error.code, 'forbidden');
    }
    assert.equal((await profile(developer.key)).body.role, 'developer', 'the key still works, the role unchanged');
    assert.equal((await stack.runtime.db.selectFrom('service_accounts').select('id').where('name', '=', name).execute()).length, 0);
  });

  it('lists every agent name’s secret names by set, never a value', async () => {
    const agentName = uniqueAgentName('secretive');
    const value = `value-${randomUUID()}`;
    for (const body of [
      { agentName, key: 'API_KEY', value },
      { agentName, key: 'API_KEY', value, forDrafts: true },
      { agentName, key: 'OTHER', value },
    ]) {
      assert.equal((await call('setSecret', body)).status, 200);
    }
    const listed = await call('listAllSecrets', {});
    assert.equal(listed.status, 200);
    const mine = listed.body.secrets.filter((s: { agentName: string }) => s.agentName === agentName).map((s: { key: string; forDrafts: boolean }) => [s.key, s.forDrafts]);
    assert.deepEqual(mine, [
      ['API_KEY', false],
      ['OTHER', false],
      ['API_KEY', true],
    ]);
    assert.ok(!JSON.stringify(listed.body).includes(value));
    assert.deepEqual((await call('listAllSecrets', { agentName })).body.error.details.fields, { agentName: 'is not a known field' });
  });

  describe('webhooks', () => {
    it('logs each attempt with its answer and the next retry, and delivers again through the queue with the same webhook-id', async () => {
      const agent = uniqueAgentName('hooked');
      await publishAgent(stack.runtime.db, agent, `export default async (sys) => sys.say('hi')`);
      const account = await createAccount(stack.runtime.db);
      await upsertWebhook(stack.runtime.db, account.id, receiver.url, stack.runtime.box.seal(generateWebhookSecret()));
      // The first attempt is answered 503; the retry (about a second later) 200.
      receiver.answers.push(503);
      const submitted = await post(stack.url, '/api/exec/submit', { agentName: agent }, { key: account.key });
      assert.equal(submitted.status, 202);
      const runId = submitted.body.runId as string;
      const logOf = async () => (await call('listWebhookDeliveries', { name: account.name })).body.deliveries as any[];

      await waitFor(async () => (await logOf())[0]?.attempts.length === 1, 15_000, 'the first attempt in the log');
      const [failed] = await logOf();
      assert.equal(failed.runId, runId);
      assert.equal(failed.agentName, agent);
      assert.equal(failed.account.name, account.name);
      assert.deepEqual({ attempt: failed.attempts[0].attempt, status: failed.attempts[0].status, error: failed.attempts[0].error }, { attempt: 1, status: 503, error: 'the receiver answered 503' });
      if (failed.status === 'pending') assert.equal(Date.parse(failed.nextAttemptAt) - Date.parse(failed.attempts[0].at), 1000, 'the next retry is 1 s after the first attempt');
      assert.ok(!JSON.stringify(failed).includes('whsec_'), 'no signing secret');

      await waitFor(async () => (await logOf())[0]?.status === 'delivered', 15_000, 'the retry delivered');
      const delivered = (await logOf())[0];
      assert.deepEqual(delivered.attempts.map((a: { status: number }) => a.status), [503, 200]);
      assert.equal(delivered.nextAttemptAt, null);

      const again = await call('redeliverWebhook', { webhookId: delivered.webhookId });
      assert.deepEqual(again.body, { webhookId: delivered.webhookId, runId, status: 'pending' });
      await waitFor(async () => (await logOf())[0]?.attempts.length === 3, 15_000, 'the attempt of deliver again');
      const redelivered = (await logOf())[0];
      assert.equal(redelivered.status, 'delivered');
      assert.ok(redelivered.requeuedAt);
      assert.deepEqual(
        receiver.received.filter((r) => r.runId === runId).map((r) => r.webhookId),
        [delivered.webhookId, delivered.webhookId, delivered.webhookId],
        'three POSTs, each with the same webhook-id',
      );

      const endpoints = (await call('listWebhooks', {})).body.webhooks;
      assert.deepEqual(endpoints.find((w: { name: string }) => w.name === account.name).url, receiver.url);
      assert.ok(!JSON.stringify(endpoints).includes('whsec_'));
    });

    it('pages the delivery log by keyset: every delivery once, newest first, whatever the page size', async () => {
      const account = await createAccount(stack.runtime.db);
      const created = new Date(Date.now() - 3_600_000);
      const ids: string[] = [];
      // Seven deliveries, the last three with the same created_at (ties go by id).
      for (let i = 0; i < 7; i++) {
        const row = await stack.runtime.db
          .insertInto('webhook_deliveries')
          .values({ run_id: randomUUID(), service_account_id: account.id, created_at: new Date(created.getTime() + Math.min(i, 4) * 1000) })
          .returning('id')
          .executeTakeFirstOrThrow();
        ids.push(row.id);
      }
      const expected = (await stack.runtime.db.selectFrom('webhook_deliveries').select('id').where('service_account_id', '=', account.id).orderBy('created_at', 'desc').orderBy('id', 'desc').execute()).map((r) => r.id);
      assert.deepEqual([...expected].sort(), [...ids].sort());
      for (const limit of [1, 3, 7, 50]) {
        const seen: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await call('listWebhookDeliveries', { name: account.name, limit, ...(cursor ? { cursor } : {}) });
          assert.equal(page.status, 200, JSON.stringify(page.body));
          seen.push(...page.body.deliveries.map((d: { webhookId: string }) => d.webhookId));
          cursor = page.body.nextCursor ?? undefined;
        } while (cursor);
        assert.deepEqual(seen, expected, `pages of ${limit}`);
      }
      const pending = await call('listWebhookDeliveries', { name: account.name, status: 'delivered' });
      assert.deepEqual(pending.body.deliveries, []);
    });

    it('answers 400 for a bad cursor, limit or field, 404 for an unknown account or delivery, 400 to deliver again without an endpoint', async () => {
      assert.deepEqual((await call('listWebhookDeliveries', { cursor: 'not-a-cursor' })).body.error.details.fields, { cursor: 'is not a cursor this server gave' });
      assert.ok((await call('listWebhookDeliveries', { limit: 0 })).body.error.details.fields.limit);
      assert.deepEqual((await call('listWebhookDeliveries', { since: 'yesterday' })).body.error.details.fields, { since: 'is not a known field' });
      assert.equal((await call('listWebhookDeliveries', { name: 'no-such-account' })).status, 404);
      assert.equal((await call('redeliverWebhook', { webhookId: randomUUID() })).status, 404);
      assert.ok((await call('redeliverWebhook', { webhookId: 'nope' })).body.error.details.fields.webhookId);

      const account = await createAccount(stack.runtime.db);
      const delivery = await stack.runtime.db
        .insertInto('webhook_deliveries')
        .values({ run_id: randomUUID(), service_account_id: account.id })
        .returning('id')
        .executeTakeFirstOrThrow();
      await stack.runtime.db.updateTable('webhook_deliveries').set({ status: 'failed' }).where('id', '=', delivery.id).execute();
      const refused = await call('redeliverWebhook', { webhookId: delivery.id });
      assert.equal(refused.status, 400);
      assert.ok(refused.body.error.details.fields.webhookId);
      const row = await stack.runtime.db.selectFrom('webhook_deliveries').select(['status', 'requeued_at']).where('id', '=', delivery.id).executeTakeFirstOrThrow();
      assert.deepEqual(row, { status: 'failed', requeued_at: null }, 'nothing changed');
    });
  });

  it('counts every failed run per day and result code in the error report, beyond its rows', async () => {
    // A window of its own, a year ahead: other tests' runs share the database.
    const day = new Date(Date.UTC(new Date().getUTCFullYear() + 1, 0, 10, 12));
    const codes = ['timedOut', 'timedOut', 'errorInAgent', 'success'] as const;
    for (const [i, code] of codes.entries()) {
      const at = new Date(day.getTime() + i * 60_000);
      await insertExecution(stack.runtime.db, { ...successRecord(randomUUID()), result_code: code, started_at: at, finished_at: at });
    }
    const since = new Date(day.getTime() - 86_400_000).toISOString();
    const until = new Date(day.getTime() + 86_400_000).toISOString();
    const report = await call('errorReport', { since, until });
    assert.equal(report.status, 200);
    const dayText = day.toISOString().slice(0, 10);
    assert.deepEqual(report.body.totals, [
      { day: dayText, resultCode: 'errorInAgent', count: 1 },
      { day: dayText, resultCode: 'timedOut', count: 2 },
    ]);
  });
});

/** A webhook receiver on loopback: answers each POST with the next status of `answers` (then 200) and notes its webhook-id and run. */
async function startReceiver() {
  const answers: number[] = [];
  const received: { webhookId: string; runId: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push({ webhookId: String(req.headers['webhook-id']), runId: (JSON.parse(body) as { data: { runId: string } }).data.runId });
      res.writeHead(answers.shift() ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { server, url: `http://127.0.0.1:${port}/hooks`, port, answers, received };
}
