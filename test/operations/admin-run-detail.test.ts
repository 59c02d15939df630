import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentexecClient, ForbiddenError, NotFoundError } from '../../clients/typescript/src/index.js';
import { post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { waitFor } from '../helpers/wait.js';

/** The console's Run page (DESIGN §18): /api/admin/getRun and /api/admin/cancelRun, through the HTTP API and the client. */
describe('admin: a run, its timeline, and cancelling it', () => {
  let stack: Stack;
  let admin: { key: string; id: string };
  let caller: { key: string; id: string; name: string };
  let server: http.Server;
  let base: string;
  const timelineAgent = uniqueAgentName('timeline');
  const sleeper = uniqueAgentName('sleeper');
  const token = `tok-${randomUUID()}`;
  const pin = `pin-${randomUUID()}`;

  const adminPost = (path: string, body: unknown, key = admin.key) => post(stack.url, path, body, { key });

  before(async () => {
    server = http.createServer((req, res) => {
      res.writeHead(req.url?.startsWith('/ok') ? 200 : 404, { 'content-type': 'text/plain' }).end('hi');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    stack = await startStack();
    admin = await createAccount(stack.runtime.db, 'admin');
    caller = await createAccount(stack.runtime.db, 'user');
    await publishAgent(
      stack.runtime.db,
      timelineAgent,
      `export default async (sys) => {
        const ok = await sys.fetch(sys.inputs.base + '/ok?token=' + sys.secrets.TOKEN);
        const missing = await sys.fetch(sys.inputs.base + '/missing');
        try { await sys.fetch('http://10.1.2.3/refused'); } catch (err) { sys.log('refused'); }
        sys.log('token ' + sys.secrets.TOKEN + ', statuses ' + ok.status + ' ' + missing.status);
        const answers = await sys.ask({ message: 'Your PIN?', inputs: [{ name: 'pin', type: 'password' }] });
        sys.log('pin ' + answers.pin);
        sys.say('done');
      }`,
    );
    await publishAgent(stack.runtime.db, sleeper, `export default async (sys) => { await sys.sleep(4000); sys.say('woke'); }`);
    const secret = await adminPost('/api/admin/setSecret', { agentName: timelineAgent, key: 'TOKEN', value: token });
    assert.equal(secret.status, 200, JSON.stringify(secret.body));
  });
  after(async () => {
    await stack.close();
    server.close();
  });

  it("shows an ended run's timeline: each fetch with its status or error and duration, log lines and the ask, secrets masked", async () => {
    const asked = await post(stack.url, '/api/exec/execAgent', { agentName: timelineAgent, inputs: { base } }, { key: caller.key, headers: { 'X-Request-Id': 'console-run-1' } });
    assert.equal(asked.body.resultCode, 'ask', JSON.stringify(asked.body));
    const runId = (await stack.runtime.db.selectFrom('executions').select('id').where('request_id', '=', 'console-run-1').executeTakeFirstOrThrow()).id;

    const res = await adminPost('/api/admin/getRun', { runId });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const run = res.body;
    assert.equal(run.status, 'ended');
    assert.equal(run.resultCode, 'ask');
    assert.equal(run.agentName, timelineAgent);
    assert.equal(run.convid, asked.body.convid);
    assert.deepEqual(run.account, { kind: 'serviceAccount', id: caller.id, name: caller.name });
    assert.equal(run.requestId, 'console-run-1');
    assert.equal(run.response.askInput.message, 'Your PIN?');
    assert.equal(run.traceId, null, 'no tracing in this process');
    assert.deepEqual(
      run.timeline.map((entry: { kind: string }) => entry.kind),
      ['fetch', 'fetch', 'fetch', 'log', 'log', 'ask'],
    );
    const [ok, missing, refused] = run.timeline;
    assert.deepEqual([ok.method, ok.url, ok.status, ok.error], ['GET', `${base}/ok`, 200, null], 'the query (with the token) is left out');
    assert.deepEqual([missing.url, missing.status], [`${base}/missing`, 404]);
    assert.equal(refused.status, null);
    assert.match(refused.error, /10\.1\.2\.3/);
    for (const fetch of [ok, missing, refused]) assert.ok(Number.isInteger(fetch.durationMs) && fetch.durationMs >= 0);
    assert.equal(run.timeline[4].text, 'token ********, statuses 200 404');
    for (let i = 1; i < run.timeline.length; i++) assert.ok(run.timeline[i].at >= run.timeline[i - 1].at, 'in order');
    assert.ok(run.timeline[0].at >= run.startedAt && run.timeline.at(-1).at <= run.finishedAt);
    assert.equal(JSON.stringify(run).includes(token), false);

    // The answer's run replays the fetches (nothing is sent again): its timeline holds only what it did itself.
    const answered = await post(stack.url, '/api/exec/execAgent', { agentName: timelineAgent, convid: asked.body.convid, inputs: { pin } }, { key: caller.key, headers: { 'X-Request-Id': 'console-run-2' } });
    assert.equal(answered.body.resultCode, 'success', JSON.stringify(answered.body));
    const secondId = (await stack.runtime.db.selectFrom('executions').select('id').where('request_id', '=', 'console-run-2').executeTakeFirstOrThrow()).id;
    const second = (await adminPost('/api/admin/getRun', { runId: secondId })).body;
    assert.deepEqual(
      second.timeline.map((entry: { kind: string; text?: string }) => [entry.kind, entry.text]),
      [['log', 'pin ********']],
    );
    assert.deepEqual(second.response.output, [{ type: 'text', text: 'done' }]);
  });

  it('shows a running run as running, and an admin cancels it: it ends stopped', async () => {
    const callerClient = new AgentexecClient({ baseUrl: stack.url, apiKey: caller.key });
    const adminClient = new AgentexecClient({ baseUrl: stack.url, apiKey: admin.key });
    const { runId } = await callerClient.submit(sleeper);
    await waitFor(async () => (await adminClient.adminGetRun(runId)).status === 'running', 5000, 'the run to start');
    const running = await adminClient.adminGetRun(runId);
    assert.equal(running.resultCode, null);
    assert.ok(running.startedAt && running.submittedAt && running.startedAt >= running.submittedAt);
    assert.equal(running.background, true);
    assert.equal(await adminClient.adminCancelRun(runId), true);
    await waitFor(async () => (await adminClient.adminGetRun(runId)).status === 'ended', 5000, 'the run to end');
    const ended = await adminClient.adminGetRun(runId);
    assert.equal(ended.resultCode, 'stopped');
    assert.equal(await adminClient.adminCancelRun(runId), false, 'a second cancel is harmless');
  });

  it('answers 404 for an unknown run, 400 naming the field for bad input', async () => {
    for (const path of ['/api/admin/getRun', '/api/admin/cancelRun']) {
      const unknown = await adminPost(path, { runId: randomUUID() });
      assert.equal(unknown.status, 404, path);
      assert.equal(unknown.body.error.code, 'notFound');
      for (const [body, field] of [
        [{ runId: 'x' }, 'runId'],
        [{}, 'runId'],
        [{ runId: randomUUID(), extra: 1 }, 'extra'],
      ] as const) {
        const res = await adminPost(path, body);
        assert.equal(res.status, 400, `${path} ${JSON.stringify(body)}`);
        assert.ok(res.body.error.details.fields[field], JSON.stringify(res.body));
      }
    }
    await assert.rejects(new AgentexecClient({ baseUrl: stack.url, apiKey: admin.key }).adminGetRun(randomUUID()), NotFoundError);
  });

  it('answers 403 to callers that are not admins, even for their own run', async () => {
    const { runId } = await new AgentexecClient({ baseUrl: stack.url, apiKey: caller.key }).submit(sleeper);
    const developer = await createAccount(stack.runtime.db, 'developer');
    for (const key of [caller.key, developer.key]) {
      for (const path of ['/api/admin/getRun', '/api/admin/cancelRun']) {
        const res = await adminPost(path, { runId }, key);
        assert.equal(res.status, 403, path);
        assert.equal(res.body.error.code, 'forbidden');
      }
    }
    await assert.rejects(new AgentexecClient({ baseUrl: stack.url, apiKey: caller.key }).adminCancelRun(runId), ForbiddenError);
    assert.equal(await new AgentexecClient({ baseUrl: stack.url, apiKey: admin.key }).adminCancelRun(runId), true);
  });
});
