import assert from 'node:assert/strict';
import { createDb, ensureDatabase, migrateToLatest, type Db } from '../../db/database.js';
import { execAgent } from '../helpers/api.js';
import { createAccount } from '../helpers/fixtures.js';
import { startPrivatePostgres, type PrivateServer } from '../helpers/private-servers.js';
import { freePort, type Spawned } from '../helpers/processes.js';
import { testEnv } from '../helpers/test-env.js';
import { assertEachSuccessKeptOnce, assertOutageAnswered, interrupt, publishFaultAgents, startBackgroundLoad, startWebAndWorker } from './load-under-fault.js';

const maxRuntimeMs = 4000;

describe('PostgreSQL restarted under load (web and worker processes)', function () {
  this.timeout(120_000);
  let port = '';
  let url = '';
  let counter = '';
  let asker = '';
  let postgres: PrivateServer;
  let db: Db;
  let processes: Spawned[] = [];
  let key: string;

  before(async () => {
    port = String(await freePort());
    url = `http://127.0.0.1:${port}`;
    postgres = await startPrivatePostgres();
    const databaseUrl = `${postgres.url}/agentexec_faults`;
    await ensureDatabase(databaseUrl);
    db = createDb(databaseUrl, 2);
    await migrateToLatest(db);
    key = (await createAccount(db)).key;
    ({ counter, asker } = await publishFaultAgents(db));
    const env = {
      DATABASE_URL: databaseUrl,
      QUEUE_PREFIX: `${testEnv.QUEUE_PREFIX}-pg`,
      PORT: port,
      JOB_LOCK_MS: '1000',
      MAX_AGENT_RUNTIME_MS: String(maxRuntimeMs),
      LOG_LEVEL: 'info',
    };
    processes = await startWebAndWorker(env);
  });
  after(async () => {
    for (const p of processes) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await db?.destroy();
    await postgres?.destroy();
  });

  it('answers every call 503 or with its result, none waiting past the max runtime; keeps pauses; recovers by itself', async () => {
    const paused = await execAgent(url, key, { agentName: asker });
    assert.equal(paused.body.resultCode, 'ask');
    const load = await startBackgroundLoad(url, key, counter, 6);
    await new Promise((resolve) => setTimeout(resolve, 1000));

    const outage = await interrupt(postgres, 1500);
    await load.recovered(outage.restarted, 3, 30_000);
    await load.stop();

    await assertEachSuccessKeptOnce(db, load, assertOutageAnswered(load, outage, maxRuntimeMs), counter);
    const answered = await execAgent(url, key, { agentName: asker, convid: paused.body.convid, inputs: { name: 'Ada' } });
    assert.equal(answered.body.resultCode, 'success', 'the pause made before the restart is intact');
  });
});
