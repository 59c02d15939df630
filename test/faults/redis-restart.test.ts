import assert from 'node:assert/strict';
import { Queue } from 'bullmq';
import { maintenanceQueueName } from '../../shared/channels.js';
import { createDb } from '../../db/database.js';
import { execAgent } from '../helpers/api.js';
import { createAccount } from '../helpers/fixtures.js';
import { startPrivateRedis, type PrivateServer } from '../helpers/private-servers.js';
import { freePort, type Spawned } from '../helpers/processes.js';
import { testEnv } from '../helpers/test-env.js';
import { waitFor } from '../helpers/wait.js';
import { assertEachSuccessKeptOnce, assertOutageAnswered, interrupt, publishFaultAgents, startBackgroundLoad, startWebAndWorker } from './load-under-fault.js';

const maxRuntimeMs = 4000;

describe('Redis restarted under load (web and worker processes)', function () {
  this.timeout(90_000);
  let port = '';
  let url = '';
  const db = createDb(testEnv.DATABASE_URL!, 2);
  let counter = '';
  let asker = '';
  let redis: PrivateServer;
  let processes: Spawned[] = [];
  let key: string;

  before(async () => {
    port = String(await freePort());
    url = `http://127.0.0.1:${port}`;
    redis = await startPrivateRedis();
    key = (await createAccount(db)).key;
    ({ counter, asker } = await publishFaultAgents(db));
    const env = { REDIS_URL: redis.url, PORT: port, JOB_LOCK_MS: '1000', MAX_AGENT_RUNTIME_MS: String(maxRuntimeMs), LOG_LEVEL: 'info' };
    processes = await startWebAndWorker(env);
  });
  after(async () => {
    for (const p of processes) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await redis.destroy();
    await db.destroy();
  });

  it('answers every call 503 or with its result, none waiting past the max runtime; keeps pauses; recovers by itself, schedulers too', async () => {
    const paused = await execAgent(url, key, { agentName: asker });
    assert.equal(paused.body.resultCode, 'ask');
    const load = await startBackgroundLoad(url, key, counter, 6);
    await new Promise((resolve) => setTimeout(resolve, 1000));

    const outage = await interrupt(redis, 1500);
    await load.recovered(outage.restarted, 3, 30_000);
    await load.stop();

    await assertEachSuccessKeptOnce(db, load, assertOutageAnswered(load, outage, maxRuntimeMs), counter);
    const queue = new Queue(maintenanceQueueName, { connection: { url: redis.url }, prefix: testEnv.QUEUE_PREFIX! });
    try {
      await waitFor(async () => (await queue.getJobScheduler('retention-sweep')) !== undefined, 10_000, 'the retention sweep scheduled again');
    } finally {
      await queue.close();
    }
    const answered = await execAgent(url, key, { agentName: asker, convid: paused.body.convid, inputs: { name: 'Ada' } });
    assert.equal(answered.body.resultCode, 'success', 'the pause made before the restart is intact');
    assert.deepEqual(answered.body.output, [{ type: 'text', text: 'hi Ada' }]);
  });
});
