import assert from 'node:assert/strict';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { runQueueName } from '../../shared/channels.js';
import type { RunJobData } from '../../shared/jobs.js';
import { createDb } from '../../db/database.js';
import { execAgent } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { freePort, spawnEntry, waitForOutput, type Spawned } from '../helpers/processes.js';
import { testEnv } from '../helpers/test-env.js';
import { waitFor } from '../helpers/wait.js';

/** sys.call when the worker that holds the parent is killed with SIGKILL while its children run. */
describe('a parent whose worker is killed while its children run', function () {
  this.timeout(60_000);
  // A queue of its own with a short job lock, so a dead worker's jobs are noticed in about a second.
  const env = { JOB_LOCK_MS: '1000', QUEUE_PREFIX: `${testEnv.QUEUE_PREFIX}-call-kills`, LOG_LEVEL: 'info' };
  const db = createDb(testEnv.DATABASE_URL!, 2);
  const queue = new Queue<RunJobData>(runQueueName, { connection: new Redis(testEnv.REDIS_URL!, { maxRetriesPerRequest: null }), prefix: env.QUEUE_PREFIX });
  const processes: Spawned[] = [];
  const napper = uniqueAgentName('napper');
  const fan = uniqueAgentName('fan');

  const start = (entry: 'cli/web.js' | 'workers/main.js', extra: Record<string, string> = {}) => {
    const spawned = spawnEntry(entry, [], { ...env, ...extra });
    processes.push(spawned);
    return spawned;
  };
  const jobs = async (states: ('active' | 'waiting' | 'prioritized')[]) => (await queue.getJobs(states)).filter((job) => job.data?.agentName === napper || job.data?.agentName === fan);

  before(async () => {
    await publishAgent(db, napper, `export default async (sys) => { await sys.sleep(30000); sys.say('napped ' + sys.inputs.n); }`);
    await publishAgent(db, fan, `export default async (sys) => { const r = await Promise.all([1, 2, 3].map((n) => sys.call(${JSON.stringify(napper)}, { n }))); sys.say(r.map((x) => x.resultCode).join()); }`);
  });
  after(async () => {
    for (const p of processes) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await queue.close();
    await db.destroy();
  });

  it('ends the parent unexpected and stops each of its children, run once, whichever worker had it', async () => {
    const key = (await createAccount(db)).key;
    const port = String(await freePort());
    const web = start('cli/web.js', { PORT: port });
    // The doomed worker holds one run at a time, and one more while that run waits on children: the parent and one child.
    const doomed = start('workers/main.js', { WORKER_CONCURRENCY: '1' });
    await Promise.all([waitForOutput(web, /web listening/), waitForOutput(doomed, /worker running/)]);
    const call = execAgent(`http://127.0.0.1:${port}`, key, { agentName: fan });
    await waitFor(async () => (await jobs(['active'])).length === 2 && (await jobs(['waiting', 'prioritized'])).length === 2, 15_000, 'the parent and one child to run, two children to wait');
    const survivor = start('workers/main.js', { WORKER_CONCURRENCY: '4' });
    await waitForOutput(survivor, /worker running/);
    await waitFor(async () => (await jobs(['active'])).length === 4, 15_000, 'the other two children to run on the other worker');
    const parent = (await jobs(['active'])).find((job) => job.data.agentName === fan)!;
    const childIds = (await jobs(['active'])).filter((job) => job.data.parent?.runId === parent.data.runId).map((job) => job.data.runId);
    assert.equal(childIds.length, 3);

    doomed.child.kill('SIGKILL');
    await doomed.exited;
    const answer = await call;
    assert.equal(answer.body.resultCode, 'unexpected', JSON.stringify(answer.body));
    const napperRuns = () => db.selectFrom('executions').select(['id', 'result_code']).where('agent_name', '=', napper).execute();
    // The children nap 30 s: ended well before, they were stopped (DESIGN §19: nothing runs orphaned).
    await waitFor(async () => (await napperRuns()).length === 3 && (await jobs(['active', 'waiting', 'prioritized'])).length === 0, 20_000, 'every child to end');
    const children = await napperRuns();
    assert.deepEqual(children.map((c) => c.id).sort(), [...childIds].sort(), 'each child ran once, no other was started');
    const codes = children.map((c) => c.result_code);
    // The child on the dead worker ends unexpected as its parent does, or stopped when the parent's end withdrew it first.
    assert.ok(codes.every((code) => code === 'stopped' || code === 'unexpected'), `no child ran on: ${codes.join()}`);
    assert.ok(codes.filter((code) => code === 'stopped').length >= 2, `the children on the living worker were stopped: ${codes.join()}`);
  });
});
