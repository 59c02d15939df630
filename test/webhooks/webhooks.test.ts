import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { runCli } from '../helpers/processes.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { waitFor } from '../helpers/wait.js';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on loopback: answers each delivery with the next status of `answers` (then 200). */
async function startReceiver(): Promise<{ server: Server; url: string; port: number; received: Received[]; answers: number[] }> {
  const received: Received[] = [];
  const answers: number[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(answers.shift() ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { server, url: `http://127.0.0.1:${port}/hooks`, port, received, answers };
}

/** Webhooks of background runs (DESIGN §14), delivered to real receivers started here. */
describe('webhooks', function () {
  this.timeout(60_000);
  let stack: Stack;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let unlisted: Awaited<ReturnType<typeof startReceiver>>;
  const agent = uniqueAgentName('signer');

  before(async () => {
    receiver = await startReceiver();
    unlisted = await startReceiver();
    // Only the first receiver's port is listed: the second is a private address the guard refuses.
    stack = await startStack({ WEBHOOK_ALLOW: `127.0.0.1:${receiver.port}`, WEBHOOK_SWEEP_SECONDS: '1', WORKER_CONCURRENCY: '2' });
    await publishAgent(
      stack.runtime.db,
      agent,
      `export default async (sys) => {
        if (sys.query === 'login') {
          const { pin } = await sys.ask({ message: 'PIN?', inputs: [{ name: 'pin', type: 'password' }] });
          sys.say('PIN of ' + pin.length + ' digits accepted');
        } else if (sys.query === 'slow') await sys.sleep(1500);
        else sys.say('done ' + sys.query);
      }`,
    );
  });
  after(async () => {
    await stack.close();
    receiver.server.close();
    unlisted.server.close();
  });

  /** `allow`: the WEBHOOK_ALLOW of the command line (by default, the stack's). */
  async function accountWithWebhook(url: string, allow = `127.0.0.1:${receiver.port}`): Promise<{ key: string; name: string; id: string; secret: string }> {
    const account = await createAccount(stack.runtime.db);
    const set = await runCli(['webhooks:set', '--name', account.name, '--url', url, '--json'], { WEBHOOK_ALLOW: allow });
    assert.equal(set.code, 0, set.output);
    assert.match(set.json.secret, /^whsec_[A-Za-z0-9+/=]{20,}$/);
    return { key: account.key, name: account.name, id: account.id, secret: set.json.secret };
  }

  const deliveriesOf = (runId: string) => receiver.received.filter((r) => (JSON.parse(r.body) as { data: { runId: string } }).data.runId === runId);

  it('POSTs each background run’s end, signed as Standard Webhooks; never an execAgent run, never a password answer', async () => {
    const account = await accountWithWebhook(receiver.url);
    const direct = await post(stack.url, '/api/exec/execAgent', { agentName: agent, inputs: { query: 'direct' } }, { key: account.key });
    const asked = await post(stack.url, '/api/exec/submit', { agentName: agent, inputs: { query: 'login' } }, { key: account.key });
    await waitFor(() => deliveriesOf(asked.body.runId).length === 1, 10_000, 'the ask’s delivery');
    const pin = '93817264';
    const answered = await post(stack.url, '/api/exec/submit', { agentName: agent, convid: asked.body.convid, inputs: { pin } }, { key: account.key });
    await waitFor(() => deliveriesOf(answered.body.runId).length === 1, 10_000, 'the answer’s delivery');

    const verifier = new Webhook(account.secret);
    for (const runId of [asked.body.runId, answered.body.runId]) {
      const [delivery] = deliveriesOf(runId);
      const event = verifier.verify(delivery!.body, delivery!.headers as Record<string, string>) as { type: string; timestamp: string; data: any };
      assert.equal(event.type, 'run.ended');
      assert.ok(Math.abs(Date.parse(event.timestamp) - Date.now()) < 60_000);
      assert.equal(event.data.runId, runId);
      assert.equal(event.data.convid, asked.body.convid);
      assert.equal(delivery!.body.includes(pin), false, 'the password answer is not in the body');
    }
    assert.equal(JSON.parse(deliveriesOf(asked.body.runId)[0]!.body).data.response.resultCode, 'ask');
    assert.deepEqual(JSON.parse(deliveriesOf(answered.body.runId)[0]!.body).data.response.output, [{ type: 'text', text: 'PIN of 8 digits accepted' }]);
    const db = stack.runtime.db;
    const directRun = await db.selectFrom('executions').select('id').where('convid', '=', direct.body.convid).executeTakeFirstOrThrow();
    assert.deepEqual(await db.selectFrom('webhook_deliveries').select('id').where('run_id', '=', directRun.id).execute(), [], 'an execAgent run is not sent');
    // The receiver has them; the worker marks each delivered once its answer is back.
    const statuses = async () => (await db.selectFrom('webhook_deliveries').select('status').where('service_account_id', '=', account.id).execute()).map((row) => row.status);
    await waitFor(async () => (await statuses()).every((status) => status === 'delivered'), 5000, 'the deliveries marked delivered');
    assert.deepEqual(await statuses(), ['delivered', 'delivered'], 'only the two background runs had a delivery');
  });

  it('retries a receiver that is down, with the same webhook-id, and logs every attempt', async () => {
    const account = await accountWithWebhook(receiver.url);
    receiver.answers.push(503, 500);
    const { runId } = (await post(stack.url, '/api/exec/submit', { agentName: agent, inputs: { query: 'retry' } }, { key: account.key })).body;
    await waitFor(() => deliveriesOf(runId).length === 3, 20_000, 'three attempts (about 1 s and 5 s apart)');
    const ids = new Set(deliveriesOf(runId).map((d) => d.headers['webhook-id']));
    assert.equal(ids.size, 1, 'the same webhook-id on every attempt');
    let log: Awaited<ReturnType<typeof runCli>> | undefined;
    // The third attempt is logged once the receiver's answer is back at the worker.
    await waitFor(async () => (log = await runCli(['webhooks:deliveries', '--name', account.name, '--json'])).json.attempts.length === 3, 10_000, 'three logged attempts');
    assert.deepEqual(
      log!.json.attempts.map((a: any) => [a.attempt, a.status]),
      [
        [3, 200],
        [2, 500],
        [1, 503],
      ],
    );
    assert.equal(log!.json.attempts[0].delivery, 'delivered');
    assert.deepEqual(
      log!.json.attempts.map((a: any) => a.outcome),
      ['delivered', 'failed', 'failed'],
      'each attempt its own outcome',
    );
    const text = await runCli(['webhooks:deliveries', '--name', account.name]);
    const row = (attempt: number) => text.output.split('\n').find((line) => new RegExp(`${runId}\\s+${attempt}\\s`).test(line)) ?? '';
    assert.match(row(1), /\bfailed\s+503\s+the receiver answered 503/, text.output);
    assert.doesNotMatch(row(1), /delivered/, 'a failed attempt is not shown as delivered');
    assert.doesNotMatch(row(2), /delivered/);
    assert.match(row(3), /\bdelivered\s+200\s+delivered\s*$/, 'the delivery delivered, on its newest attempt');
  });

  it('refuses at once, storing nothing, an endpoint a delivery would be refused; accepts it once WEBHOOK_ALLOW lists it', async () => {
    const account = await createAccount(stack.runtime.db);
    const stored = async () => (await stack.runtime.db.selectFrom('webhooks').select('url').where('service_account_id', '=', account.id).execute()).map((row) => row.url);
    const set = (url: string, allow?: string) => runCli(['webhooks:set', '--name', account.name, '--url', url], allow === undefined ? {} : { WEBHOOK_ALLOW: allow });
    const refusals: [string, string | undefined, RegExp][] = [
      [unlisted.url, undefined, /127\.0\.0\.1 is not a public address/],
      [unlisted.url, `127.0.0.1:${receiver.port}`, /127\.0\.0\.1 is not allowed by WEBHOOK_ALLOW/],
      [`http://localhost:${unlisted.port}/hooks`, undefined, /localhost is not a public address/],
      [`http://[::1]:${unlisted.port}/hooks`, undefined, /::1 is not a public address/],
      ['http://no-such-host.invalid/hooks', undefined, /no-such-host\.invalid does not resolve/],
      ['ftp://example.com/hooks', undefined, /--url must be an http: or https: URL/],
    ];
    for (const [url, allow, message] of refusals) {
      const refused = await set(url, allow);
      assert.equal(refused.code, 1, `${url}: ${refused.output}`);
      assert.match(refused.output, message);
      assert.doesNotMatch(refused.output, /whsec_|\n\s+at /, 'no secret, no stack');
    }
    assert.deepEqual(await stored(), [], 'nothing stored');
    const accepted = await set(unlisted.url, `127.0.0.1:${unlisted.port}`);
    assert.equal(accepted.code, 0, accepted.output);
    assert.deepEqual(await stored(), [unlisted.url]);
  });

  it('sends a background run that ended without running (cancelled while queued) too', async () => {
    const account = await accountWithWebhook(receiver.url);
    const submit = (query: string) => post(stack.url, '/api/exec/submit', { agentName: agent, inputs: { query } }, { key: account.key });
    // The worker holds 2 runs at a time: the third waits in the queue.
    const busy = [(await submit('slow')).body.runId, (await submit('slow')).body.runId];
    const queued = (await submit('queued')).body.runId;
    assert.equal((await post(stack.url, '/api/exec/getRun', { runId: queued }, { key: account.key })).body.status, 'queued');
    assert.equal((await post(stack.url, '/api/exec/cancel', { runId: queued }, { key: account.key })).body.cancelled, true);
    await waitFor(() => deliveriesOf(queued).length === 1, 15_000, 'the cancelled run’s webhook (queued again by the sweep)');
    assert.equal(JSON.parse(deliveriesOf(queued)[0]!.body).data.response.resultCode, 'stopped');
    for (const runId of busy) await waitFor(() => deliveriesOf(runId).length === 1, 15_000, 'the other runs’ webhooks');
  });

  it('refuses a destination WEBHOOK_ALLOW does not list, at each attempt', async () => {
    // Listed when it was set, not by the workers' WEBHOOK_ALLOW now.
    const account = await accountWithWebhook(unlisted.url, `127.0.0.1:${unlisted.port}`);
    const { runId } = (await post(stack.url, '/api/exec/submit', { agentName: agent, inputs: { query: 'refused' } }, { key: account.key })).body;
    let attempts: any[] = [];
    await waitFor(
      async () => {
        attempts = (await runCli(['webhooks:deliveries', '--name', account.name, '--json'])).json.attempts;
        return attempts.length > 0;
      },
      15_000,
      'the first attempt',
    );
    assert.equal(attempts[0].runId, runId);
    assert.equal(attempts[0].status, null);
    assert.match(attempts[0].error, /destination refused: 127\.0\.0\.1 is not allowed by WEBHOOK_ALLOW/);
    assert.equal(attempts[0].delivery, 'pending', 'tried again later');
    assert.equal(unlisted.received.length, 0, 'the unlisted receiver was never reached');
  });
});
