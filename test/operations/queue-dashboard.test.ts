import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { runQueueName } from '../../shared/channels.js';
import { mailQueueName, type MailJobData } from '../../shared/mail-jobs.js';
import { createBrowser } from '../helpers/browser.js';
import { createAccount, createUser, publishAgent, strongPassword, uniqueAgentName } from '../helpers/fixtures.js';
import { openStream } from '../helpers/sse.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { waitFor } from '../helpers/wait.js';

describe('queue dashboard (/admin/queues)', () => {
  let stack: Stack;
  let adminKey: string;
  let developerKey: string;
  let adminCookie: string;
  let userCookie: string;
  let connection: Redis;
  let runsQueue: Queue;
  let mailQueue: Queue<MailJobData>;
  const sleeper = uniqueAgentName('sleeper');

  /** A GET as the caller sends it: a bearer key, or a cookie on a top-level navigation (no Origin). */
  const get = (path: string, credential: { key?: string; cookie?: string } = {}, method = 'GET') => {
    const headers: Record<string, string> = {};
    if (credential.key) headers.Authorization = `Bearer ${credential.key}`;
    if (credential.cookie) Object.assign(headers, { Cookie: credential.cookie, 'Sec-Fetch-Site': 'none' });
    return fetch(`${stack.url}${path}`, { method, headers });
  };

  const signIn = async (role: 'admin' | 'user') => {
    const password = strongPassword();
    const user = await createUser(stack.runtime.db, { password, role });
    const browser = createBrowser(stack.url);
    assert.equal((await browser.post('/api/auth/login', { email: user.email, password })).status, 200);
    return browser.cookie!;
  };

  before(async () => {
    stack = await startStack();
    adminKey = (await createAccount(stack.runtime.db, 'admin')).key;
    developerKey = (await createAccount(stack.runtime.db, 'developer')).key;
    adminCookie = await signIn('admin');
    userCookie = await signIn('user');
    await publishAgent(stack.runtime.db, sleeper, `export default async (sys) => { await sys.sleep(1500); sys.say('awake'); }`);
    connection = new Redis(stack.config.redisUrl, { maxRetriesPerRequest: null });
    runsQueue = new Queue(runQueueName, { connection, prefix: stack.config.queuePrefix });
    mailQueue = new Queue<MailJobData>(mailQueueName, { connection, prefix: stack.config.queuePrefix });
  });
  after(async () => {
    await runsQueue.close();
    await mailQueue.close();
    connection.disconnect();
    await stack.close();
  });

  it('serves the dashboard page and its static files to an admin bearer key', async () => {
    const page = await get('/admin/queues', { key: adminKey });
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    const html = await page.text();
    assert.match(html, /agentexec queues/);
    const script = /src="(static\/js\/[^"]+\.js)"/.exec(html)?.[1];
    assert.ok(script, 'the page loads its script from the dashboard');
    const asset = await get(`/admin/queues/${script}`, { key: adminKey });
    assert.equal(asset.status, 200);
    assert.match(asset.headers.get('content-type') ?? '', /javascript/);
    assert.equal((await get('/admin/queues', { key: adminKey }, 'HEAD')).status, 200);
  });

  it('serves it to an admin session on a top-level navigation, without Origin and with Sec-Fetch-Site: none', async () => {
    const page = await get('/admin/queues', { cookie: adminCookie });
    assert.equal(page.status, 200);
    assert.match(await page.text(), /agentexec queues/);
    const deepLink = await get(`/admin/queues/queue/${runQueueName}`, { cookie: adminCookie });
    assert.equal(deepLink.status, 200);
  });

  it('lists the runs, mail, maintenance and schedules queues, read-only, with the job of a call in progress', async () => {
    const stream = await openStream(stack.url, '/api/exec/execAgent', { agentName: sleeper, stream: true }, { key: adminKey });
    const runId = stream.headers.get('X-Run-Id')!;
    assert.ok(runId);
    let listed: { name: string; readOnlyMode: boolean; jobs: { id: string; name: string }[] }[] = [];
    await waitFor(
      async () => {
        const response = await get(`/admin/queues/api/queues?activeQueue=${runQueueName}&status=latest&page=1&jobsPerPage=50`, { cookie: adminCookie });
        assert.equal(response.status, 200);
        listed = ((await response.json()) as { queues: typeof listed }).queues;
        return listed.find((q) => q.name === runQueueName)?.jobs.some((job) => job.id === runId) ?? false;
      },
      5000,
      'the running call in the dashboard',
    );
    assert.deepEqual(listed.map((q) => q.name).sort(), ['mail', 'maintenance', 'runs', 'schedules']);
    const metrics = await (await fetch(`${stack.url}/metrics`)).text();
    assert.match(metrics, /agentexec_http_request_duration_seconds_count\{[^}]*route="\/admin\/queues\/api\/queues"/, 'labelled with the path it is served at');
    assert.ok(listed.every((q) => q.readOnlyMode), 'every queue is read-only');
    const events = await stream.done;
    assert.equal(events.at(-1)?.data.resultCode, 'success');
  });

  it('refuses a developer key and a user session (403), and a call with no credential (401), with the JSON error body', async () => {
    const expectError = async (response: Response, status: number, code: string) => {
      assert.equal(response.status, status);
      const { error } = (await response.json()) as { error: { code: string; message: string } };
      assert.equal(error.code, code);
      assert.equal(typeof error.message, 'string');
    };
    for (const path of ['/admin/queues', '/admin/queues/api/queues']) {
      await expectError(await get(path, { key: developerKey }), 403, 'forbidden');
      await expectError(await get(path, { cookie: userCookie }), 403, 'forbidden');
      await expectError(await get(path), 401, 'unauthenticated');
    }
  });

  it('refuses every request that would change a queue or a job, and the queues stay as they were', async () => {
    const job = await mailQueue.add('send', { kind: 'send', outboxId: randomUUID() }, { delay: 3_600_000, removeOnComplete: true, removeOnFail: true });
    try {
      const countsBefore = await mailQueue.getJobCounts();
      const changes: [method: string, path: string][] = [
        ['PUT', '/api/queues/pause'],
        ['PUT', `/api/queues/${mailQueueName}/pause`],
        ['PUT', `/api/queues/${mailQueueName}/clean/delayed`],
        ['PUT', `/api/queues/${mailQueueName}/promote`],
        ['PUT', `/api/queues/${mailQueueName}/${job.id}/promote`],
        ['PUT', `/api/queues/${mailQueueName}/empty`],
        ['PATCH', `/api/queues/${mailQueueName}/${job.id}/update-data`],
        ['POST', `/api/queues/${mailQueueName}/add`],
        ['DELETE', `/api/queues/${mailQueueName}/${job.id}`],
      ];
      for (const [method, path] of changes) {
        const headers = { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' };
        const response = await fetch(`${stack.url}/admin/queues${path}`, { method, headers, body: JSON.stringify({ name: 'x', data: {} }) });
        assert.equal(response.status, 403, `${method} ${path}`);
        assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'forbidden');
      }
      // An admin session from the server's own origin, as the dashboard's own buttons would send it.
      const browser = createBrowser(stack.url);
      browser.cookie = adminCookie;
      assert.equal((await browser.post(`/admin/queues/api/queues/${mailQueueName}/add`, { name: 'x', data: {} })).status, 403);

      assert.equal(await mailQueue.isPaused(), false);
      assert.equal(await runsQueue.isPaused(), false);
      assert.equal(await job.getState(), 'delayed');
      assert.deepEqual(await mailQueue.getJobCounts(), countsBefore);
    } finally {
      await job.remove();
    }
  });

  it('answers a path the dashboard does not know with the JSON 404 of the API', async () => {
    const response = await get('/admin/queues/no-such-page/at-all', { key: adminKey });
    assert.equal(response.status, 404);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'notFound');
  });
});
