import assert from 'node:assert/strict';
import { post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { openStream } from '../helpers/sse.js';
import { startStack, type Stack } from '../helpers/stack.js';

/** Background runs (DESIGN §14): submit, getRun, wait, attach and cancel by runId. */
describe('background runs', () => {
  let stack: Stack;
  let key: string;
  let otherKey: string;
  const sleeper = uniqueAgentName('sleeper');
  const quick = uniqueAgentName('quick');

  before(async () => {
    stack = await startStack({ MAX_AGENT_RUNTIME_MS: '10000' });
    key = (await createAccount(stack.runtime.db)).key;
    otherKey = (await createAccount(stack.runtime.db)).key;
    await publishAgent(stack.runtime.db, sleeper, `export default async (sys) => { sys.say('started ' + sys.query); await sys.sleep(Number(sys.inputs.ms ?? 400)); sys.say('done'); }`);
    await publishAgent(stack.runtime.db, quick, `export default async (sys) => { sys.vars.n = (sys.vars.n ?? 0) + 1; sys.say('call ' + sys.vars.n); }`);
  });
  after(() => stack.close());

  const api = (path: string, body: unknown, as = key, headers: Record<string, string> = {}) => post(stack.url, path, body, { key: as, headers });

  it('answers submit with 202 as soon as the run is queued; getRun and wait then give its status and response', async () => {
    const submitted = await api('/api/exec/submit', { agentName: sleeper, inputs: { query: 'bg' } });
    assert.equal(submitted.status, 202);
    const { runId, convid } = submitted.body;
    assert.deepEqual(submitted.body, { runId, convid, agentName: sleeper, status: 'queued' });

    const going = await api('/api/exec/getRun', { runId });
    assert.equal(going.status, 200);
    assert.ok(['queued', 'running'].includes(going.body.status), going.body.status);
    assert.equal(going.body.response, undefined);

    const waited = await api('/api/exec/wait', { runId, timeoutMs: 10_000 });
    assert.equal(waited.body.status, 'ended');
    assert.equal(waited.body.response.resultCode, 'success');
    assert.deepEqual(waited.body.response.output, [
      { type: 'text', text: 'started bg' },
      { type: 'text', text: 'done' },
    ]);
    assert.ok(Date.parse(waited.body.endedAt) >= Date.parse(waited.body.createdAt));
    assert.deepEqual((await api('/api/exec/getRun', { runId })).body, waited.body);
  });

  it('answers wait at its timeout with the status the run has then', async () => {
    const { runId } = (await api('/api/exec/submit', { agentName: sleeper, inputs: { ms: 3000 } })).body;
    const started = Date.now();
    const waited = await api('/api/exec/wait', { runId, timeoutMs: 300 });
    assert.ok(Date.now() - started >= 290);
    assert.ok(['queued', 'running'].includes(waited.body.status));
    assert.equal((await api('/api/exec/cancel', { runId })).body.cancelled, true);
    const stopped = await api('/api/exec/wait', { runId, timeoutMs: 5000 });
    assert.equal(stopped.body.response.resultCode, 'stopped');
  });

  it('runs background calls of one conversation in order, and honours Idempotency-Key', async () => {
    const first = (await api('/api/exec/submit', { agentName: quick }, key, { 'Idempotency-Key': 'bg-1' })).body;
    const again = (await api('/api/exec/submit', { agentName: quick }, key, { 'Idempotency-Key': 'bg-1' })).body;
    assert.equal(again.runId, first.runId);
    const second = (await api('/api/exec/submit', { agentName: quick, convid: first.convid })).body;
    const [a, b] = await Promise.all([api('/api/exec/wait', { runId: first.runId }), api('/api/exec/wait', { runId: second.runId })]);
    assert.deepEqual(a.body.response.output, [{ type: 'text', text: 'call 1' }]);
    assert.deepEqual(b.body.response.output, [{ type: 'text', text: 'call 2' }], JSON.stringify(b.body));
  });

  it('attaches to a run by runId, during it and after its end', async () => {
    const { runId } = (await api('/api/exec/submit', { agentName: sleeper, inputs: { query: 'x' } })).body;
    const live = await openStream(stack.url, '/api/exec/attach', { runId }, { key });
    const events = await live.done;
    assert.deepEqual(events.map((e) => e.event), ['start', 'part', 'part', 'end']);
    const later = await openStream(stack.url, '/api/exec/attach', { runId }, { key, headers: { 'Last-Event-ID': events[1]!.id! } });
    assert.deepEqual((await later.done).map((e) => [e.event, e.id]), [
      ['part', events[2]!.id],
      ['end', events[3]!.id],
    ]);
  });

  it('is 404 for another caller’s runId everywhere, and refuses a streamed or malformed submit', async () => {
    const { runId } = (await api('/api/exec/submit', { agentName: quick })).body;
    await api('/api/exec/wait', { runId });
    for (const path of ['/api/exec/getRun', '/api/exec/wait', '/api/exec/attach']) {
      const answer = await api(path, { runId }, otherKey);
      assert.equal(answer.status, 404, path);
      assert.equal(answer.body.error.code, 'notFound');
    }
    assert.equal((await api('/api/exec/cancel', { runId }, otherKey)).body.cancelled, false);
    assert.equal((await api('/api/exec/getRun', { runId: crypto.randomUUID() })).status, 404);
    const streamed = await api('/api/exec/submit', { agentName: quick, stream: true });
    assert.equal(streamed.status, 400);
    assert.ok(streamed.body.error.details.fields.stream);
    assert.equal((await api('/api/exec/wait', { runId, timeoutMs: 60_001 })).status, 400);
  });
});
