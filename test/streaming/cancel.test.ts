import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { findConversation } from '../../db/conversations.repository.js';
import { execAgent, post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { openStream } from '../helpers/sse.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { waitFor } from '../helpers/wait.js';

describe('cancelling a call', () => {
  let stack: Stack;
  let key: string;
  let hanging: Server;
  let hangingUrl: string;
  const hits: string[] = [];
  const counter = uniqueAgentName('counter');
  const busyLoop = uniqueAgentName('busy');
  const sleeper = uniqueAgentName('sleeper');
  const fetcher = uniqueAgentName('fetcher');
  const hello = uniqueAgentName('hello');
  const spinner = uniqueAgentName('spinner');

  before(async () => {
    // A server that never answers: a fetch to it stays pending until the run ends.
    hanging = createServer((req) => void hits.push(req.url ?? '')).listen(0, '127.0.0.1');
    await new Promise((resolve) => hanging.once('listening', resolve));
    const address = hanging.address();
    hangingUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`;
    stack = await startStack({ WORKER_CONCURRENCY: '2', MAX_AGENT_RUNTIME_MS: '8000' });
    key = (await createAccount(stack.runtime.db)).key;
    const db = stack.runtime.db;
    await publishAgent(db, counter, `export default async (sys) => { sys.vars.n = (sys.vars.n ?? 0) + 1; sys.say('n=' + sys.vars.n); }`);
    await publishAgent(db, busyLoop, `export default async (sys) => { sys.vars.n = 99; sys.say('spinning'); for (;;) {} }`);
    await publishAgent(db, sleeper, `export default async (sys) => { sys.vars.n = 99; sys.say('sleeping'); await sys.sleep(60000); }`);
    await publishAgent(db, fetcher, `export default async (sys) => { sys.vars.n = 99; sys.say('fetching'); await sys.fetch(sys.inputs.url); }`);
    await publishAgent(db, hello, `export default async (sys) => sys.say('hello')`);
    await publishAgent(db, spinner, `export default async (sys) => { sys.say('spinning'); if (sys.inputs.spin) for (;;) {} }`);
  });
  after(async () => {
    await stack.close();
    hanging.closeAllConnections();
    hanging.close();
  });

  /** A conversation whose counter is at 1. */
  async function conversation(): Promise<string> {
    const first = await execAgent(stack.url, key, { agentName: counter });
    assert.equal(first.body.resultCode, 'success');
    return first.body.convid;
  }

  for (const [what, agent] of [
    ['a busy loop', () => busyLoop],
    ['a pending sleep', () => sleeper],
    ['a pending fetch', () => fetcher],
  ] as const) {
    it(`stops ${what} by convid, keeps nothing of the run, and the worker goes on`, async () => {
      const convid = await conversation();
      const stream = await openStream(stack.url, '/api/exec/execAgent', { agentName: agent(), convid, inputs: { url: hangingUrl }, stream: true }, { key });
      await stream.next((e) => e.event === 'part');
      const cancel = await post(stack.url, '/api/exec/cancel', { convid }, { key });
      assert.deepEqual(cancel.body, { cancelled: true });
      const end = await stream.next((e) => e.event === 'end');
      assert.equal(end.data.resultCode, 'stopped');
      const stored = await findConversation(stack.runtime.db, convid);
      assert.deepEqual(stored?.agent_vars[counter], { n: 1 });
      assert.equal(stored?.agent_vars[agent()], undefined, 'the stopped run changed nothing');
      assert.equal(stored?.history.length, 1);
      const next = await execAgent(stack.url, key, { agentName: counter, convid });
      assert.deepEqual([next.body.resultCode, next.body.output], ['success', [{ type: 'text', text: 'n=2' }]]);
    });
  }

  it('shows a new conversation\'s first part while its run computes, on the version the worker ran before, and stops it', async () => {
    // The second call starts on the version the worker read for the first, without reading it again:
    // its parts are held back until that version is confirmed, which must not wait for the run's end.
    const first = await execAgent(stack.url, key, { agentName: spinner });
    assert.deepEqual(first.body.output, [{ type: 'text', text: 'spinning' }]);
    const stream = await openStream(stack.url, '/api/exec/execAgent', { agentName: spinner, inputs: { spin: true }, stream: true }, { key });
    const part = await stream.next((e) => e.event === 'part');
    assert.equal(part.data.text, 'spinning');
    const { convid } = stream.events.find((e) => e.event === 'start')!.data as { convid: string };
    const cancel = await post(stack.url, '/api/exec/cancel', { convid }, { key });
    assert.deepEqual(cancel.body, { cancelled: true });
    const end = await stream.next((e) => e.event === 'end');
    assert.equal(end.data.resultCode, 'stopped');
  });

  it('stops a non-streamed call by its X-Request-Id; the answer carries the parts made before the stop', async () => {
    const requestId = `req-${Date.now()}`;
    const call = post(stack.url, '/api/exec/execAgent', { agentName: fetcher, inputs: { url: `${hangingUrl}${requestId}` } }, { key, headers: { 'X-Request-Id': requestId } });
    await waitFor(() => hits.includes(`/${requestId}`), 5000, 'the agent to reach its fetch');
    assert.deepEqual((await post(stack.url, '/api/exec/cancel', { requestId }, { key })).body, { cancelled: true });
    const answer = await call;
    assert.equal(answer.body.resultCode, 'stopped');
    assert.deepEqual(answer.body.output, [{ type: 'text', text: 'fetching' }]);
  });

  it('withdraws a call still waiting for a worker, and one waiting for its conversation', async () => {
    // Both worker slots busy: the third call waits in the queue (it sleeps, so its web process does not
    // answer it itself: short runs, test/exec/short-runs.test.ts).
    const busy = [await conversation(), await conversation()];
    const streams = await Promise.all(busy.map((convid) => openStream(stack.url, '/api/exec/execAgent', { agentName: sleeper, convid, stream: true }, { key })));
    await Promise.all(streams.map((s) => s.next((e) => e.event === 'part')));
    const queued = post(stack.url, '/api/exec/execAgent', { agentName: sleeper }, { key, headers: { 'X-Request-Id': 'queued-call' } });
    await waitFor(async () => (await post(stack.url, '/api/exec/cancel', { requestId: 'queued-call' }, { key })).body.cancelled === true, 5000, 'the queued call to be found');
    assert.equal((await queued).body.resultCode, 'stopped');
    const record = await stack.runtime.db.selectFrom('executions').select('result_code').where('request_id', '=', 'queued-call').executeTakeFirstOrThrow();
    assert.equal(record.result_code, 'stopped');

    // A second call on a busy conversation waits its turn; cancelling it by request id leaves the first running.
    const waiting = post(stack.url, '/api/exec/execAgent', { agentName: counter, convid: busy[0] }, { key, headers: { 'X-Request-Id': 'waiting-call' } });
    await waitFor(async () => (await post(stack.url, '/api/exec/cancel', { requestId: 'waiting-call' }, { key })).body.cancelled === true, 5000, 'the waiting call to be found');
    assert.equal((await waiting).body.resultCode, 'stopped');
    assert.equal(streams[0]!.events.some((e) => e.event === 'end'), false, 'the running call goes on');
    for (const convid of busy) await post(stack.url, '/api/exec/cancel', { convid }, { key });
    for (const stream of streams) assert.equal((await stream.next((e) => e.event === 'end')).data.resultCode, 'stopped');
    assert.deepEqual((await findConversation(stack.runtime.db, busy[0]!))?.agent_vars[counter], { n: 1 }, 'the withdrawn call did not run');
  });

  it('is harmless twice, after the end, and for another caller', async () => {
    const convid = await conversation();
    assert.deepEqual((await post(stack.url, '/api/exec/cancel', { convid }, { key })).body, { cancelled: false }, 'after the end');
    const stream = await openStream(stack.url, '/api/exec/execAgent', { agentName: sleeper, convid, stream: true }, { key });
    await stream.next((e) => e.event === 'part');
    const other = (await createAccount(stack.runtime.db)).key;
    assert.deepEqual((await post(stack.url, '/api/exec/cancel', { convid }, { key: other })).body, { cancelled: false }, 'not the owner');
    assert.deepEqual((await post(stack.url, '/api/exec/cancel', { convid }, { key })).body, { cancelled: true });
    assert.equal((await stream.next((e) => e.event === 'end')).data.resultCode, 'stopped');
    assert.deepEqual((await post(stack.url, '/api/exec/cancel', { convid }, { key })).body, { cancelled: false }, 'twice');
  });

  it('refuses a cancel that names neither or both', async () => {
    for (const body of [{}, { convid: '8d3c1a52-58f4-4a4c-9d6c-3b7c1f0e2a11', requestId: 'x' }, { requestId: 'bad id!' }]) {
      const res = await post(stack.url, '/api/exec/cancel', body, { key });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error.code, 'invalidRequest');
    }
  });
});
