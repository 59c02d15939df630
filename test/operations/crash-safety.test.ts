import assert from 'node:assert/strict';
import { createDb } from '../../db/database.js';
import { findConversation } from '../../db/conversations.repository.js';
import { execAgent } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { freePort, spawnEntry, waitForOutput, type Spawned } from '../helpers/processes.js';
import { openStream } from '../helpers/sse.js';
import { testEnv } from '../helpers/test-env.js';
import { isRunActive, waitFor } from '../helpers/wait.js';

describe('crash safety and graceful stops (separate processes)', () => {
  let port = '';
  let url = '';
  // A queue of its own: another suite's worker (30 s job lock) would hold the stall checker's lock for 30 s.
  const env = () => ({ PORT: port, JOB_LOCK_MS: '1000', QUEUE_PREFIX: `${testEnv.QUEUE_PREFIX}-crash` });
  const db = createDb(testEnv.DATABASE_URL!, 2);
  const spawned: Spawned[] = [];
  let key: string;
  const counter = uniqueAgentName('counter');
  const slow = uniqueAgentName('slow');

  const alive = (pattern: RegExp) => spawned.find((p) => p.child.exitCode === null && p.child.signalCode === null && pattern.test(p.output()))!;

  function start(entry: 'cli/web.js' | 'workers/main.js'): Spawned {
    const process = spawnEntry(entry, [], env());
    spawned.push(process);
    return process;
  }

  before(async () => {
    port = String(await freePort());
    url = `http://127.0.0.1:${port}`;
    key = (await createAccount(db)).key;
    await publishAgent(db, counter, `export default async (sys) => { sys.vars.n = (sys.vars.n ?? 0) + 1; }`);
    await publishAgent(db, slow, `export default async (sys) => { sys.vars.n = 1000; sys.say('working'); await sys.sleep(Number(sys.inputs.ms ?? 1500)); sys.say('finished'); }`);
  });
  after(async () => {
    for (const p of spawned) p.child.kill('SIGKILL');
    await Promise.all(spawned.map((p) => p.exited));
    await db.destroy();
  });

  it('ends a run whose worker was killed with SIGKILL as unexpected, keeping nothing of it', async () => {
    const web = start('cli/web.js');
    const doomed = start('workers/main.js');
    await Promise.all([waitForOutput(web, /web listening/), waitForOutput(doomed, /worker running/)]);
    const first = await execAgent(url, key, { agentName: counter });
    const convid = first.body.convid;
    const call = execAgent(url, key, { agentName: slow, convid, inputs: { ms: 4000 } });
    await waitFor(() => isRunActive(convid, env().QUEUE_PREFIX), 15_000, 'the run to start');
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    const survivor = start('workers/main.js'); // its stall checker finds the dead worker's job
    await waitForOutput(survivor, /worker running/);
    const answer = await call;
    assert.equal(answer.body.resultCode, 'unexpected');
    const conversation = await findConversation(db, convid);
    assert.deepEqual(conversation?.agent_vars[counter], { n: 1 });
    assert.equal(conversation?.agent_vars[slow], undefined, 'nothing partial kept');
    assert.equal(conversation?.history.length, 1);
    const next = await execAgent(url, key, { agentName: counter, convid });
    assert.equal(next.body.resultCode, 'success', 'the conversation is usable again');
  });

  it('on SIGTERM a worker takes no new job, finishes its running one, then exits', async () => {
    const worker = alive(/worker running/);
    const convid = (await execAgent(url, key, { agentName: counter })).body.convid;
    const running = execAgent(url, key, { agentName: slow, convid, inputs: { ms: 1000 } });
    await waitFor(() => isRunActive(convid, env().QUEUE_PREFIX), 15_000, 'the run to start');
    worker.child.kill('SIGTERM');
    const queuedMeanwhile = execAgent(url, key, { agentName: counter });
    assert.equal((await running).body.resultCode, 'success', 'the running call finished');
    assert.equal(await worker.exited, 0);
    const replacement = start('workers/main.js');
    await waitForOutput(replacement, /worker running/);
    assert.equal((await queuedMeanwhile).body.resultCode, 'success', 'the call made during the stop ran on the next worker');
  });

  it('on SIGTERM the web process stops accepting, finishes its open streams, then exits', async () => {
    const web = alive(/web listening/);
    const stream = await openStream(url, '/api/exec/execAgent', { agentName: slow, stream: true, inputs: { ms: 800 } }, { key });
    await stream.next((e) => e.event === 'part');
    web.child.kill('SIGTERM');
    await waitFor(async () => !(await fetch(`${url}/healthz`).then(() => true, () => false)), 3000, 'new connections to be refused');
    const events = await stream.done;
    assert.deepEqual(events.map((e) => e.event), ['start', 'part', 'part', 'end']);
    assert.equal(events[3]!.data.resultCode, 'success');
    assert.equal(await web.exited, 0);
  });
});
