import assert from 'node:assert/strict';
import { createDb, ensureDatabase, migrateToLatest, type Db } from '../../db/database.js';
import { findConversation } from '../../db/conversations.repository.js';
import { execAgent } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startPrivatePostgres, type PrivateServer } from '../helpers/private-servers.js';
import { freePort, spawnEntry, waitForOutput, type Spawned } from '../helpers/processes.js';
import { testEnv } from '../helpers/test-env.js';
import { assertOutageAnswered, startBackgroundLoad } from './load-under-fault.js';

const maxRuntimeMs = 4000;

describe('PostgreSQL restarted under load (web and worker processes)', function () {
  this.timeout(120_000);
  let port = '';
  let url = '';
  const counter = uniqueAgentName('counter');
  const asker = uniqueAgentName('asker');
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
    await publishAgent(db, counter, `export default async (sys) => { sys.vars.n = (sys.vars.n ?? 0) + 1; await sys.sleep(20); sys.say(String(sys.vars.n)); }`);
    await publishAgent(db, asker, `export default async (sys) => { const a = await sys.ask({ message: 'Name?', inputs: [{ name: 'name', type: 'str' }] }); sys.say('hi ' + a.name); }`);
    const env = {
      DATABASE_URL: databaseUrl,
      QUEUE_PREFIX: `${testEnv.QUEUE_PREFIX}-pg`,
      PORT: port,
      JOB_LOCK_MS: '1000',
      MAX_AGENT_RUNTIME_MS: String(maxRuntimeMs),
      LOG_LEVEL: 'info',
    };
    processes = [spawnEntry('server/main.js', [], env), spawnEntry('workers/main.js', [], env)];
    await Promise.all([waitForOutput(processes[0]!, /web listening/), waitForOutput(processes[1]!, /worker running/)]);
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

    const stopped = performance.now();
    await postgres.stop();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await postgres.start();
    const restarted = performance.now();
    await load.recovered(restarted, 3, 30_000);
    await load.stop();

    const successes = assertOutageAnswered(load, { stopped, restarted }, maxRuntimeMs);
    for (const [client, convid] of load.convids.entries()) {
      const conversation = await findConversation(db, convid);
      assert.equal(conversation?.agent_vars[counter]?.n, successes[client]! + 1, `client ${client}: every success kept once, nothing else`);
    }
    const answered = await execAgent(url, key, { agentName: asker, convid: paused.body.convid, inputs: { name: 'Ada' } });
    assert.equal(answered.body.resultCode, 'success', 'the pause made before the restart is intact');
  });
});
