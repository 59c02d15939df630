import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { createDb } from '../../db/database.js';
import { findConversation } from '../../db/conversations.repository.js';
import { conversationTicketKey } from '../../shared/channels.js';
import { execAgent, post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { freePort, spawnEntry, waitForOutput, type Spawned } from '../helpers/processes.js';
import { openStream } from '../helpers/sse.js';
import { testEnv } from '../helpers/test-env.js';
import { waitFor } from '../helpers/wait.js';

/** Two web and two worker processes, started as the Procfile starts them. */
describe('many processes', () => {
  const ports: string[] = [];
  const urls: [string, string] = ['', ''];
  const db = createDb(testEnv.DATABASE_URL!, 2);
  const redis = new Redis(testEnv.REDIS_URL!);
  const webs: Spawned[] = [];
  const workers: Spawned[] = [];
  let key: string;
  const sayer = uniqueAgentName('sayer');
  const spinner = uniqueAgentName('spinner');
  const counter = uniqueAgentName('counter');
  const holder = uniqueAgentName('holder');

  before(async () => {
    for (const i of [0, 1]) {
      ports[i] = String(await freePort());
      urls[i] = `http://127.0.0.1:${ports[i]}`;
    }
    key = (await createAccount(db)).key;
    await publishAgent(db, sayer, `export default async (sys) => { sys.say('one'); await sys.sleep(150); sys.say('two'); }`);
    await publishAgent(db, spinner, `export default async (sys) => { sys.say('spinning'); for (;;) {} }`);
    await publishAgent(db, counter, `export default async (sys) => { sys.vars.n = (sys.vars.n ?? 0) + 1; sys.say(String(sys.vars.n)); }`);
    await publishAgent(db, holder, `export default async (sys) => { await sys.sleep(400); }`);
    for (const port of ports) webs.push(spawnEntry('cli/web.js', [], { PORT: port }));
    for (let i = 0; i < 2; i++) workers.push(spawnEntry('workers/main.js', [], { WORKER_CONCURRENCY: '2', LOG_LEVEL: 'info' }));
    await Promise.all([...webs.map((w) => waitForOutput(w, /web listening/)), ...workers.map((w) => waitForOutput(w, /worker running/))]);
  });
  after(async () => {
    for (const p of [...webs, ...workers]) p.child.kill('SIGKILL');
    await Promise.all([...webs, ...workers].map((p) => p.exited));
    await db.destroy();
    redis.disconnect();
  });

  it('relays streams held by one web process for runs on either worker', async () => {
    const streams = await Promise.all(Array.from({ length: 8 }, () => openStream(urls[0], '/api/exec/execAgent', { agentName: sayer, stream: true }, { key })));
    const runIds: string[] = [];
    for (const stream of streams) {
      const events = await stream.done;
      assert.deepEqual(events.map((e) => e.event), ['start', 'part', 'part', 'end']);
      assert.equal(events[3]!.data.resultCode, 'success');
      runIds.push(stream.headers.get('x-run-id')!);
    }
    const ranOn = () => workers.map((worker) => runIds.filter((runId) => worker.output().includes(runId)).length);
    // A worker's log line travels through its stdout pipe, which can trail the stream's end.
    await waitFor(() => ranOn()[0]! + ranOn()[1]! === 8, 5000, 'every run logged by the worker that ran it');
    const [first, second] = ranOn();
    assert.ok(first! > 0 && second! > 0, `both workers ran some: ${first} and ${second}`);
  });

  it('stops a stream held by one web process with a cancel sent to the other, and re-attaches through it', async () => {
    const stream = await openStream(urls[0], '/api/exec/execAgent', { agentName: spinner, stream: true }, { key });
    const part = await stream.next((e) => e.event === 'part');
    const convid = stream.events[0]!.data.convid;
    const attached = await openStream(urls[1], '/api/exec/attach', { convid }, { key, headers: { 'Last-Event-ID': String(part.id) } });
    assert.deepEqual((await post(urls[1], '/api/exec/cancel', { convid }, { key })).body, { cancelled: true });
    const end = await stream.next((e) => e.event === 'end');
    assert.equal(end.data.resultCode, 'stopped');
    const rest = await attached.done;
    assert.deepEqual(rest.map((e) => [e.event, e.data.resultCode]), [['end', 'stopped']]);
  });

  it('runs calls on one conversation in arrival order across web and worker processes', async () => {
    const first = await execAgent(urls[0], key, { agentName: counter });
    const convid = first.body.convid;
    // A call arrives when its web process takes its ticket in the conversation's order (runs/turns.ts):
    // each call is sent once the one before has arrived, alternating between the web processes.
    const tickets = () => redis.get(conversationTicketKey(testEnv.QUEUE_PREFIX!, convid)).then(Number);
    const arrive = async <T>(call: () => Promise<T>): Promise<{ answer: Promise<T> }> => {
      const before = await tickets();
      const answer = call();
      await waitFor(async () => (await tickets()) > before, 5000, 'the call to take its ticket');
      return { answer };
    };
    const held = await arrive(() => execAgent(urls[1], key, { agentName: holder, convid }));
    const calls = [];
    for (let i = 0; i < 10; i++) calls.push((await arrive(() => execAgent(urls[i % 2]!, key, { agentName: counter, convid }))).answer);
    await held.answer;
    const counts = (await Promise.all(calls)).map((c) => Number(c.body.output[0].text));
    assert.deepEqual(counts, Array.from({ length: 10 }, (_, i) => i + 2));
    assert.equal((await findConversation(db, convid))?.history.length, 12);
  });
});
