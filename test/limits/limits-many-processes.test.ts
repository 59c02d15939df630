import assert from 'node:assert/strict';
import { createDb } from '../../db/database.js';
import { post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { freePort, spawnEntry, waitForOutput, type Spawned } from '../helpers/processes.js';
import { testEnv } from '../helpers/test-env.js';

/** Two web processes and a worker, started as the Procfile starts them: one caller's limits hold across both. */
describe('limits per caller across web processes', () => {
  const urls: string[] = [];
  const db = createDb(testEnv.DATABASE_URL!, 2);
  const spawned: Spawned[] = [];
  let adminKey: string;
  const sleeper = uniqueAgentName('sleeper');
  const quick = uniqueAgentName('quick');

  before(async () => {
    adminKey = (await createAccount(db, 'admin')).key;
    await publishAgent(db, sleeper, `export default async (sys) => { await sys.sleep(1500); }`);
    await publishAgent(db, quick, `export default async (sys) => { sys.say('quick'); }`);
    for (let i = 0; i < 2; i++) {
      const port = String(await freePort());
      urls.push(`http://127.0.0.1:${port}`);
      spawned.push(spawnEntry('cli/web.js', [], { PORT: port }));
    }
    const worker = spawnEntry('workers/main.js', [], { WORKER_CONCURRENCY: '10', LOG_LEVEL: 'info' });
    spawned.push(worker);
    await Promise.all([...spawned.slice(0, 2).map((w) => waitForOutput(w, /web listening/)), waitForOutput(worker, /worker running/)]);
  });
  after(async () => {
    for (const p of spawned) p.child.kill('SIGKILL');
    await Promise.all(spawned.map((p) => p.exited));
    await db.destroy();
  });

  it('shares runsInFlight between web processes', async () => {
    const account = await createAccount(db);
    // Set before the account's first call: neither web process has its limits cached yet.
    assert.equal((await post(urls[0]!, '/api/admin/setLimits', { name: account.name, runsInFlight: 2 }, { key: adminKey })).status, 200);
    const submit = (url: string) => post(url, '/api/exec/submit', { agentName: sleeper }, { key: account.key });
    assert.equal((await submit(urls[0]!)).status, 202);
    assert.equal((await submit(urls[1]!)).status, 202);
    const refused = await Promise.all([submit(urls[0]!), submit(urls[1]!)]);
    assert.deepEqual(refused.map((r) => r.status), [429, 429]);
    assert.deepEqual(refused.map((r) => r.body.error.code), ['rateLimited', 'rateLimited']);
  });

  it('shares runsPerMinute between web processes, inline runs included', async () => {
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 5000) await new Promise((resolve) => setTimeout(resolve, left + 50));
    const account = await createAccount(db);
    assert.equal((await post(urls[1]!, '/api/admin/setLimits', { name: account.name, runsPerMinute: 3 }, { key: adminKey })).status, 200);
    const call = (url: string) => post(url, '/api/exec/execAgent', { agentName: quick }, { key: account.key });
    const statuses = [];
    for (const url of [urls[0]!, urls[1]!, urls[0]!, urls[1]!, urls[0]!]) statuses.push((await call(url)).status);
    assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
  });
});
