import assert from 'node:assert/strict';
import { createDb } from '../../db/database.js';
import { execAgent } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { freePort, spawnEntry, waitForOutput, type Spawned } from '../helpers/processes.js';
import { deleteRedisKeys } from '../setup.js';
import { testEnv } from '../helpers/test-env.js';

describe('a paused ask survives restarts', () => {
  let port = '';
  let url = '';
  const db = createDb(testEnv.DATABASE_URL!, 2);
  let web: Spawned | undefined;
  let worker: Spawned | undefined;

  async function startProcesses() {
    worker = spawnEntry('workers/main.js');
    web = spawnEntry('cli/web.js', [], { PORT: port });
    await waitForOutput(worker, /worker running/);
    await waitForOutput(web, /web listening/);
  }

  async function stopProcesses(signal: NodeJS.Signals) {
    for (const p of [web, worker]) p?.child.kill(signal);
    await Promise.all([web?.exited, worker?.exited]);
  }

  before(async () => {
    port = String(await freePort());
    url = `http://127.0.0.1:${port}`;
  });
  after(async () => {
    await stopProcesses('SIGKILL');
    await db.destroy();
  });

  it('is answered from a new connection after web and worker were restarted and Redis was flushed', async () => {
    const { key } = await createAccount(db);
    const agentName = uniqueAgentName('survivor');
    await publishAgent(
      db,
      agentName,
      `export default async (sys) => {
        sys.vars.rolled = Math.random();
        const a = await sys.ask({ message: 'still there?', inputs: [{ name: 'pw', type: 'password' }, { name: 'c', type: 'chooseOne', options: ['y', 'n'] }] });
        sys.say('resumed with ' + a.c + ' and a ' + a.pw.length + '-character password; rolled ' + sys.vars.rolled);
      }`,
    );
    await startProcesses();
    const asked = await execAgent(url, key, { agentName });
    assert.equal(asked.body.resultCode, 'ask');

    await stopProcesses('SIGKILL');
    await deleteRedisKeys(testEnv.REDIS_URL!, `${testEnv.QUEUE_PREFIX}:*`);
    await startProcesses();

    const done = await execAgent(url, key, { agentName, convid: asked.body.convid, inputs: { pw: 'twelve chars', c: 'y' } });
    assert.equal(done.body.resultCode, 'success', JSON.stringify(done.body));
    assert.match(done.body.output[0].text, /^resumed with y and a 12-character password; rolled 0\.\d+$/);
    assert.ok(!web!.output().includes('twelve chars') && !worker!.output().includes('twelve chars'), 'the password is never logged');
  });
});
