import assert from 'node:assert/strict';
import { createDb } from '../../db/database.js';
import { findConversation } from '../../db/conversations.repository.js';
import { execAgent, post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { freePort, spawnEntry, waitForOutput, type Spawned } from '../helpers/processes.js';
import { openStream } from '../helpers/sse.js';
import { testEnv } from '../helpers/test-env.js';
import { isRunActive, waitFor } from '../helpers/wait.js';

/** Two web and two worker processes; one of each is killed with SIGKILL while it works. */
describe('processes killed mid-work', function () {
  this.timeout(60_000);
  const ports: string[] = [];
  const urls: [string, string] = ['', ''];
  // A queue of its own with a short job lock, so a dead worker's jobs are noticed in about a second.
  const env = { JOB_LOCK_MS: '1000', QUEUE_PREFIX: `${testEnv.QUEUE_PREFIX}-kills`, WORKER_CONCURRENCY: '4', LOG_LEVEL: 'info' };
  const db = createDb(testEnv.DATABASE_URL!, 2);
  const processes: Spawned[] = [];
  let key: string;
  const counter = uniqueAgentName('counter');
  const slow = uniqueAgentName('slow');
  const ticker = uniqueAgentName('ticker');

  const start = (entry: 'cli/web.js' | 'workers/main.js', extra: Record<string, string> = {}) => {
    const spawned = spawnEntry(entry, [], { ...env, ...extra });
    processes.push(spawned);
    return spawned;
  };

  before(async () => {
    for (const i of [0, 1]) {
      ports[i] = String(await freePort());
      urls[i] = `http://127.0.0.1:${ports[i]}`;
    }
    key = (await createAccount(db)).key;
    await publishAgent(db, counter, `export default async (sys) => { sys.vars.n = (sys.vars.n ?? 0) + 1; sys.say(String(sys.vars.n)); }`);
    await publishAgent(db, slow, `export default async (sys) => { sys.vars.n = 1000; await sys.sleep(3000); sys.say('done'); }`);
    await publishAgent(db, ticker, `export default async (sys) => { for (let i = 1; i <= 12; i++) { sys.say('tick ' + i); await sys.sleep(150); } }`);
  });
  after(async () => {
    for (const p of processes) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await db.destroy();
  });

  it('ends the runs of a worker killed mid-run as unexpected, keeping nothing, while the other worker runs its own and takes new work', async () => {
    const web = start('cli/web.js', { PORT: ports[0]! });
    const workers = [start('workers/main.js'), start('workers/main.js')];
    await Promise.all([waitForOutput(web, /web listening/), ...workers.map((w) => waitForOutput(w, /worker running/))]);
    const convids: string[] = [];
    for (let i = 0; i < 6; i++) convids.push((await execAgent(urls[0], key, { agentName: counter })).body.convid);
    const calls = convids.map((convid) => execAgent(urls[0], key, { agentName: slow, convid }));
    await waitFor(async () => (await Promise.all(convids.map((c) => isRunActive(c, env.QUEUE_PREFIX)))).every(Boolean), 15_000, 'every slow run to start');
    const doomed = workers[0]!;
    doomed.child.kill('SIGKILL');
    await doomed.exited;

    const answers = await Promise.all(calls);
    const codes = answers.map((a) => a.body.resultCode);
    assert.ok(codes.every((code) => code === 'success' || code === 'unexpected'), codes.join());
    assert.ok(codes.includes('unexpected') && codes.includes('success'), `both workers had runs: ${codes.join()}`);
    for (const [i, answer] of answers.entries()) {
      const conversation = await findConversation(db, convids[i]!);
      assert.deepEqual(conversation?.agent_vars[counter], { n: 1 });
      if (answer.body.resultCode === 'success') assert.deepEqual(conversation?.agent_vars[slow], { n: 1000 });
      else assert.equal(conversation?.agent_vars[slow], undefined, 'nothing partial kept');
    }
    const next = await Promise.all(convids.map((convid) => execAgent(urls[0], key, { agentName: counter, convid })));
    assert.deepEqual(next.map((a) => a.body.resultCode), convids.map(() => 'success'), 'the surviving worker takes new work');
  });

  it('lets a client whose web process was killed mid-stream re-attach through the other one and get the rest, once each', async () => {
    const doomedWeb = start('cli/web.js', { PORT: ports[1]! });
    await waitForOutput(doomedWeb, /web listening/);
    const stream = await openStream(urls[1], '/api/exec/execAgent', { agentName: ticker, stream: true }, { key });
    await stream.next((e) => e.event === 'part' && e.data.text === 'tick 3');
    doomedWeb.child.kill('SIGKILL');
    await stream.done.catch(() => undefined);
    const seen = stream.events;
    assert.ok(!seen.some((e) => e.event === 'end'), 'the stream was cut before its end');
    const convid = seen[0]!.data.convid;
    const lastId = seen.at(-1)!.id!;

    const rest = await openStream(urls[0], '/api/exec/attach', { convid }, { key, headers: { 'Last-Event-ID': lastId } });
    const more = await rest.done;
    const ticks = [...seen, ...more].filter((e) => e.event === 'part').map((e) => e.data.text);
    assert.deepEqual(ticks, Array.from({ length: 12 }, (_, i) => `tick ${i + 1}`));
    const ids = [...seen, ...more].map((e) => Number(e.id));
    assert.deepEqual(ids, [...ids].sort((a, b) => a - b), 'in order');
    assert.equal(new Set(ids).size, ids.length, 'none twice');
    assert.equal(more.at(-1)!.event, 'end');
    assert.equal(more.at(-1)!.data.resultCode, 'success');
    assert.equal((await post(urls[0], '/api/exec/cancel', { convid }, { key })).body.cancelled, false);
  });
});
