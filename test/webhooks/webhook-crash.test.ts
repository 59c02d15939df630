import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import { Webhook } from 'standardwebhooks';
import { webhookJobId, webhookQueueName } from '../../shared/webhook-jobs.js';
import { createDb } from '../../db/database.js';
import { post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { freePort, runCli, spawnEntry, waitForOutput, type Spawned } from '../helpers/processes.js';
import { testEnv } from '../helpers/test-env.js';
import { waitFor } from '../helpers/wait.js';

/**
 * A worker killed with SIGKILL just after a background run committed (DESIGN §14): the delivery was
 * written with the run's record, so it is made anyway: by the job the worker queued, or, when the job
 * is gone too, by the sweep of another worker. Separate processes, on a queue prefix of their own.
 */
describe('webhooks when a worker is killed after its commit (separate processes)', function () {
  this.timeout(60_000);
  const prefix = `${testEnv.QUEUE_PREFIX}-webhook-crash`;
  const db = createDb(testEnv.DATABASE_URL!, 2);
  const spawned: Spawned[] = [];
  const received: { id: string; body: string; headers: Record<string, string> }[] = [];
  let receiver: Server;
  let env: Record<string, string>;

  before(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        received.push({ id: String(req.headers['webhook-id']), body, headers: req.headers as Record<string, string> });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    env = { PORT: String(await freePort()), QUEUE_PREFIX: prefix, WEBHOOK_ALLOW: '127.0.0.1', WEBHOOK_SWEEP_SECONDS: '1', JOB_LOCK_MS: '1000' };
  });
  after(async () => {
    for (const p of spawned) p.child.kill('SIGKILL');
    await Promise.all(spawned.map((p) => p.exited));
    receiver.close();
    await db.destroy();
  });

  const start = (entry: 'cli/web.js' | 'workers/main.js') => {
    const process = spawnEntry(entry, [], env);
    spawned.push(process);
    return process;
  };

  it('still delivers the run’s webhook, once', async () => {
    const account = await createAccount(db);
    const agentName = uniqueAgentName('quick');
    await publishAgent(db, agentName, `export default async (sys) => { sys.say('kept ' + sys.query); }`);
    const set = await runCli(['webhooks:set', '--name', account.name, '--url', `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`, '--json'], env);
    assert.equal(set.code, 0, set.output);

    const web = start('cli/web.js');
    const doomed = start('workers/main.js');
    await Promise.all([waitForOutput(web, /web listening/), waitForOutput(doomed, /worker running/)]);
    const url = `http://127.0.0.1:${env.PORT}`;
    const { runId } = (await post(url, '/api/exec/submit', { agentName, inputs: { query: 'crash' } }, { key: account.key })).body;
    const ended = await post(url, '/api/exec/wait', { runId, timeoutMs: 20_000 }, { key: account.key });
    assert.equal(ended.body.status, 'ended');
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    // As if the worker had died before queueing the delivery: its job is gone too (unless it was delivered already).
    const queue = new Queue(webhookQueueName, { connection: { url: testEnv.REDIS_URL! }, prefix });
    await queue.remove(webhookJobId(runId)).catch(() => undefined);
    await queue.close();

    const survivor = start('workers/main.js');
    await waitForOutput(survivor, /worker running/);
    await waitFor(async () => (await db.selectFrom('webhook_deliveries').select('status').where('run_id', '=', runId).executeTakeFirst())?.status === 'delivered', 20_000, 'the delivery');
    const mine = received.filter((r) => JSON.parse(r.body).data.runId === runId);
    assert.equal(new Set(mine.map((r) => r.id)).size, 1);
    const event = new Webhook(set.json.secret).verify(mine[0]!.body, mine[0]!.headers) as { data: { response: { output: unknown } } };
    assert.deepEqual(event.data.response.output, [{ type: 'text', text: 'kept crash' }]);
  });
});
