import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { execAgent, post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { openStream } from '../helpers/sse.js';
import { startStack, type Stack } from '../helpers/stack.js';

describe('streamed calls and re-attaching', () => {
  let stack: Stack;
  let key: string;
  const slowSayer = uniqueAgentName('slow-sayer');
  const writer = uniqueAgentName('writer');
  const asker = uniqueAgentName('asker');

  before(async () => {
    stack = await startStack();
    key = (await createAccount(stack.runtime.db)).key;
    await publishAgent(stack.runtime.db, slowSayer, `export default async (sys) => { sys.say('first'); await sys.sleep(400); sys.say('second'); sys.vars.done = true; }`);
    await publishAgent(stack.runtime.db, writer, `export default async (sys) => { sys.write('Hel'); sys.write('lo'); sys.html('<b>x</b>'); }`);
    await publishAgent(
      stack.runtime.db,
      asker,
      `export default async (sys) => {
        sys.say('before the ask');
        const a = await sys.ask({ message: 'Name?', inputs: [{ name: 'name', type: 'str' }] });
        sys.say('Hi ' + a.name);
        await sys.sleep(300);
        sys.say('bye');
      }`,
    );
  });
  after(() => stack.close());

  it('answers text/event-stream with the run id in X-Run-Id, numbered events, and parts as the agent makes them', async () => {
    const stream = await openStream(stack.url, '/api/exec/execAgent', { agentName: slowSayer, stream: true }, { key });
    assert.equal(stream.status, 200);
    assert.match(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
    const runId = stream.headers.get('x-run-id');
    assert.match(runId ?? '', /^[0-9a-f-]{36}$/);
    const events = await stream.done;
    assert.deepEqual(events.map((e) => e.event), ['start', 'part', 'part', 'end']);
    assert.deepEqual(events.map((e) => Number(e.id)), [1, 2, 3, 4], 'ids count up from 1');
    const [start, first, second, end] = events as [any, any, any, any];
    assert.deepEqual(start.data, { convid: end.data.convid, agentName: slowSayer, runId });
    assert.deepEqual(first.data, { type: 'text', text: 'first' });
    assert.deepEqual(second.data, { type: 'text', text: 'second' });
    assert.equal(end.data.resultCode, 'success');
    assert.equal('output' in end.data, false, 'end carries no output');
    assert.ok(end.at - first.at > 250, 'the first part arrived while the agent was still sleeping');
  });

  it('keeps the order of events when a large one (handed on in a later turn) is followed by small ones, streamed or not', async () => {
    const big = uniqueAgentName('big-sayer');
    await publishAgent(stack.runtime.db, big, `export default async (sys) => { sys.say('a'); sys.say('x'.repeat(300000)); sys.say('b'); sys.say('c'); }`);
    const stream = await openStream(stack.url, '/api/exec/execAgent', { agentName: big, stream: true }, { key });
    const events = await stream.done;
    assert.deepEqual(events.map((e) => (e.event === 'part' ? (e.data as { text: string }).text.slice(0, 3) : e.event)), ['start', 'a', 'xxx', 'b', 'c', 'end']);
    assert.deepEqual(events.map((e) => Number(e.id)), [1, 2, 3, 4, 5, 6]);
    const plain = await execAgent(stack.url, key, { agentName: big });
    assert.equal(plain.body.resultCode, 'success');
    assert.deepEqual(plain.body.output.map((part: { text: string }) => part.text.length), [1, 300_000, 1, 1]);
  });

  it('streams written text as delta events', async () => {
    const stream = await openStream(stack.url, '/api/exec/execAgent', { agentName: writer, stream: true }, { key });
    const events = await stream.done;
    assert.deepEqual(
      events.map((e) => [e.event, e.data]).slice(1, -1),
      [
        ['part', { type: 'text', text: 'Hel' }],
        ['delta', { text: 'lo' }],
        ['part', { type: 'html', html: '<b>x</b>' }],
      ],
    );
    const plain = await execAgent(stack.url, key, { agentName: writer });
    assert.deepEqual(plain.body.output, [{ type: 'text', text: 'Hello' }, { type: 'html', html: '<b>x</b>' }], 'the same run unstreamed');
  });

  it('streams the rest of a run when an ask is answered in a streamed call', async () => {
    const asked = await execAgent(stack.url, key, { agentName: asker });
    assert.equal(asked.body.resultCode, 'ask');
    const stream = await openStream(stack.url, '/api/exec/execAgent', { agentName: asker, convid: asked.body.convid, inputs: { name: 'Ada' }, stream: true }, { key });
    const events = await stream.done;
    assert.deepEqual(events.map((e) => e.event), ['start', 'part', 'part', 'end']);
    assert.deepEqual(events.slice(1, 3).map((e) => e.data.text), ['Hi Ada', 'bye'], 'only what the resumed run made');
    assert.equal(events[3]!.data.resultCode, 'success');
  });

  it('answers a streamed call to an unknown agent 404 agentNotFound before any event, as an unstreamed one, and records no run', async () => {
    const missing = uniqueAgentName('missing');
    const stream = await openStream(stack.url, '/api/exec/execAgent', { agentName: missing, stream: true }, { key });
    assert.equal(stream.status, 404);
    assert.match(stream.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(stream.headers.get('x-run-id'), null, 'no run was named');
    assert.deepEqual(await stream.done, []);
    assert.equal(stream.errorBody.error.code, 'agentNotFound');
    assert.equal(stream.errorBody.error.message, (await execAgent(stack.url, key, { agentName: missing })).body.error.message, 'the same refusal streamed or not');
    const records = await stack.runtime.db.selectFrom('executions').select('id').where('agent_name', '=', missing).execute();
    assert.deepEqual(records, []);

    // Published afterwards: the next streamed call runs it (a name not found is not remembered).
    await publishAgent(stack.runtime.db, missing, `export default async (sys) => { sys.say('here now'); }`);
    const later = await openStream(stack.url, '/api/exec/execAgent', { agentName: missing, stream: true }, { key });
    assert.deepEqual((await later.done).map((e) => e.event), ['start', 'part', 'end']);
  });

  it('re-attaches with Last-Event-ID: the missed events, then the rest', async () => {
    const stream = await openStream(stack.url, '/api/exec/execAgent', { agentName: slowSayer, stream: true }, { key });
    const first = await stream.next((e) => e.event === 'part');
    const convid = stream.events[0]!.data.convid;
    stream.abort(); // the connection is lost after the first part

    const rest = await openStream(stack.url, '/api/exec/attach', { convid }, { key, headers: { 'Last-Event-ID': String(first.id) } });
    assert.equal(rest.status, 200);
    const events = await rest.done;
    assert.deepEqual(events.map((e) => [e.id, e.event]), [['3', 'part'], ['4', 'end']]);
    assert.equal(events[0]!.data.text, 'second');
    assert.equal(events[1]!.data.resultCode, 'success');

    const whole = await openStream(stack.url, '/api/exec/attach', { convid }, { key });
    assert.deepEqual((await whole.done).map((e) => e.event), ['start', 'part', 'part', 'end'], 'after the end, the whole run is replayed');
  });

  it("starts a new stream with its headers and start event, and sends a re-attach's headers before it has an event", async () => {
    const opened = await rawAnswer(stack.url, '/api/exec/execAgent', { agentName: slowSayer, stream: true }, key);
    assert.match(opened, /^HTTP\/1\.1 200 /);
    assert.match(opened, /\r\nx-run-id: [0-9a-f-]{36}\r\n/i);
    assert.match(opened, /\r\n\r\n[0-9a-f]+\r\nid: 1\nevent: start\n/, 'the start event first');

    // Read up to the first part, then gone: the agent sleeps 400 ms before its next part.
    const started = await rawAnswer(stack.url, '/api/exec/execAgent', { agentName: slowSayer, stream: true }, key, {}, (text) => text.includes('event: part'));
    const convid = /"convid":"([^"]+)"/.exec(started)![1]!;
    const attached = await rawAnswer(stack.url, '/api/exec/attach', { convid }, key, { 'Last-Event-ID': '2' });
    assert.match(attached, /^HTTP\/1\.1 200 /);
    assert.doesNotMatch(attached, /event: /, 'headers alone, ahead of the next event');
  });

  it('does not attach to another caller’s conversation, nor to one without a stream', async () => {
    const stream = await openStream(stack.url, '/api/exec/execAgent', { agentName: writer, stream: true }, { key });
    const convid = (await stream.done)[0]!.data.convid;
    const other = (await createAccount(stack.runtime.db)).key;
    const foreign = await post(stack.url, '/api/exec/attach', { convid }, { key: other });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.error.code, 'notFound');
    const plain = await execAgent(stack.url, key, { agentName: writer });
    const unstreamed = await post(stack.url, '/api/exec/attach', { convid: plain.body.convid }, { key });
    assert.equal(unstreamed.status, 404);
    const badId = await post(stack.url, '/api/exec/attach', { convid }, { key, headers: { 'Last-Event-ID': 'x' } });
    assert.equal(badId.status, 400);
    assert.ok(badId.body.error.details.fields['Last-Event-ID']);
  });
});

/**
 * A POST's answer as the socket delivers it, read until `enough` (by default: the first piece the socket
 * delivers, i.e. the status line and headers and whatever came in the same write); the connection is
 * then closed.
 */
function rawAnswer(baseUrl: string, path: string, body: unknown, key: string, headers: Record<string, string> = {}, enough = (_text: string) => true): Promise<string> {
  const { hostname, port } = new URL(baseUrl);
  const payload = JSON.stringify(body);
  const lines = [`POST ${path} HTTP/1.1`, `Host: ${hostname}:${port}`, `Authorization: Bearer ${key}`, 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(payload)}`, 'Connection: close'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return new Promise((resolve, reject) => {
    let text = '';
    const socket = connect(Number(port), hostname, () => socket.write(`${lines.join('\r\n')}\r\n\r\n${payload}`));
    socket.on('data', (chunk) => {
      text += chunk.toString('utf8');
      if (!enough(text)) return;
      socket.destroy();
      resolve(text);
    });
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`the connection closed before the answer had what was waited for: ${text}`)));
  });
}
