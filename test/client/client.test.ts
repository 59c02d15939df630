import assert from 'node:assert/strict';
import {
  AgentexecClient,
  AgentexecError,
  assembleResponse,
  ConversationBusyError,
  InvalidRequestError,
  NotFoundError,
  UnauthenticatedError,
  type ConversationList,
  type ConversationRead,
  type ExecutionResponse,
  type PinnedConversation,
  type RunEvent,
} from '../../clients/typescript/src/index.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { waitFor } from '../helpers/wait.js';

/** The TypeScript client (DESIGN §15) against the real server. */
describe('the TypeScript client', () => {
  let stack: Stack;
  let proxy: TcpProxy;
  let client: AgentexecClient;
  let apiKey: string;
  const hello = uniqueAgentName('hello');
  const ticker = uniqueAgentName('ticker');
  const sleeper = uniqueAgentName('sleeper');
  const asker = uniqueAgentName('asker');
  const writer = uniqueAgentName('writer');

  before(async () => {
    // A call waits 1.5 s at most for its conversation (a streamed one is then refused with an error event).
    stack = await startStack({ MAX_AGENT_RUNTIME_MS: '20000', CONV_WAIT_MS: '1500' });
    const port = new URL(stack.url).port;
    proxy = await startTcpProxy('127.0.0.1', Number(port));
    const db = stack.runtime.db;
    apiKey = (await createAccount(db)).key;
    client = new AgentexecClient({ baseUrl: `http://127.0.0.1:${proxy.port}`, apiKey });
    await publishAgent(db, hello, `export default async (sys) => { sys.vars.n = (sys.vars.n ?? 0) + 1; sys.say('hello ' + sys.query + ' ' + sys.vars.n); }`);
    await publishAgent(db, ticker, `export default async (sys) => { for (let i = 1; i <= 12; i++) { sys.say('tick ' + i); await sys.sleep(60); } }`);
    await publishAgent(db, sleeper, `export default async (sys) => { sys.say('sleeping'); await sys.sleep(60000); }`);
    await publishAgent(db, writer, `export default async (sys) => { sys.say('a'); sys.write(' b'); sys.write(' c'); sys.html('<i>x</i>'); sys.write('d'); sys.image('https://example.com/a.png', 'image/png'); }`);
    await publishAgent(db, asker, `export default async (sys) => { const { name } = await sys.ask({ message: 'Name?', inputs: [{ name: 'name', type: 'str' }] }); sys.say('hi ' + name); }`);
  });
  after(async () => {
    await proxy.close();
    await stack.close();
  });

  it('runs an agent, goes on in its conversation, and answers an ask', async () => {
    const first = await client.run(hello, { query: 'Ada' });
    assert.equal(first.resultCode, 'success');
    assert.deepEqual(first.output, [{ type: 'text', text: 'hello Ada 1' }]);
    const second = await client.run(hello, { query: 'Ada' }, { convid: first.convid });
    assert.deepEqual(second.output, [{ type: 'text', text: 'hello Ada 2' }]);

    const paused = await client.run(asker);
    assert.equal(paused.resultCode, 'ask');
    assert.equal(paused.askInput?.inputs[0]?.name, 'name');
    const answered = await client.answer(asker, { name: 'Grace' }, { convid: paused.convid });
    assert.equal(answered.convid, paused.convid);
    assert.deepEqual(answered.output, [{ type: 'text', text: 'hi Grace' }]);
  });

  it('still answers in the old argument order, answer(convid, agentName, answers), told apart by the types', async () => {
    const paused = await client.run(asker);
    const answered = await client.answer(paused.convid, asker, { name: 'Old' });
    assert.equal(answered.convid, paused.convid);
    assert.deepEqual(answered.output, [{ type: 'text', text: 'hi Old' }]);
    // The new order without the conversation is refused before any call.
    assert.throws(() => (client.answer as (...args: unknown[]) => unknown)(asker, { name: 'x' }), /convid/);
  });

  it('answers the final response of a stream: the same as the unstreamed call, parts and deltas put together', async () => {
    const plain = await client.run(writer);
    assert.equal(plain.output.length, 4, JSON.stringify(plain.output));
    const streamed = await client.stream(writer).finalResponse();
    assert.deepEqual({ ...streamed, convid: plain.convid }, plain, 'the JSON execution response, field for field');
    assert.deepEqual(Object.keys(streamed), Object.keys(plain), 'in the same order');

    // After reading part of the stream in a loop: the rest is read, the whole run assembled.
    const stream = client.stream(writer);
    const seen: RunEvent[] = [];
    for await (const event of stream) {
      seen.push(event);
      if (event.event === 'delta') break;
    }
    assert.deepEqual(seen.map((e) => e.event), ['start', 'part', 'delta']);
    await assert.rejects(stream.finalResponse(), /left before its end/, 'leaving the loop ended the stream');
    const read: RunEvent[] = [];
    const whole = client.stream(writer);
    for await (const event of whole) read.push(event);
    assert.deepEqual((await whole.finalResponse()).output, plain.output, 'after the loop read it all');
    assert.deepEqual(assembleResponse(read).output, plain.output, 'assembleResponse of the events gives the same');

    // An ask: its askInput, as run answers it.
    const asked: ExecutionResponse = await client.stream(asker).finalResponse();
    assert.equal(asked.resultCode, 'ask');
    assert.deepEqual(asked.askInput, (await client.run(asker)).askInput);
    const answered = await client.stream(asker, { name: 'Lin' }, { convid: asked.convid }).finalResponse();
    assert.deepEqual(answered.output, [{ type: 'text', text: 'hi Lin' }]);
  });

  it('reads a conversation back, lists conversations and pins one, with typed answers', async () => {
    const first = await client.run(hello, { query: 'Kim' });
    await client.run(hello, { query: 'Kim' }, { convid: first.convid });
    const read: ConversationRead = await client.getConversation(first.convid);
    assert.equal(read.convid, first.convid);
    assert.equal(read.pinned, false);
    assert.deepEqual(read.turns.map((t) => [t.agentName, t.query, t.resultCode, t.output]), [
      [hello, 'Kim', 'success', [{ type: 'text', text: 'hello Kim 1' }]],
      [hello, 'Kim', 'success', [{ type: 'text', text: 'hello Kim 2' }]],
    ]);
    const lastOnly = await client.getConversation(first.convid, { limit: 1 });
    assert.deepEqual(lastOnly.turns.map((t) => t.output), [[{ type: 'text', text: 'hello Kim 2' }]]);

    const pinned: PinnedConversation = await client.pinConversation(first.convid);
    assert.deepEqual(pinned, { convid: first.convid, pinned: true });
    const list: ConversationList = await client.listConversations({ limit: 200 });
    const listed = list.conversations.find((c) => c.convid === first.convid);
    assert.ok(listed, 'the conversation is listed');
    assert.equal(listed.pinned, true);
    assert.equal(listed.expiresAt, null);
    assert.equal(listed.lastAgentName, hello);
    assert.deepEqual(await client.pinConversation(first.convid, false), { convid: first.convid, pinned: false });
    assert.equal((await client.getConversation(first.convid)).pinned, false);

    const other = new AgentexecClient({ baseUrl: stack.url, apiKey: (await createAccount(stack.runtime.db)).key });
    await assert.rejects(other.getConversation(first.convid), (err: unknown) => err instanceof NotFoundError && err.status === 404);
    await assert.rejects(other.pinConversation(first.convid), NotFoundError);
  });

  it('throws NotFoundError, with its request id, for a stream of an unknown agent, before any event', async () => {
    const events: RunEvent[] = [];
    await assert.rejects(
      (async () => {
        for await (const event of client.stream(uniqueAgentName('missing'))) events.push(event);
      })(),
      (err: unknown) => {
        assert.ok(err instanceof NotFoundError);
        assert.equal(err.code, 'agentNotFound');
        assert.equal(err.status, 404);
        assert.match(err.requestId ?? '', /.+/);
        return true;
      },
    );
    assert.deepEqual(events, [], 'no start event naming a run that never ran');
  });

  it('yields the error event of a stream refused once started, then throws it with the request id', async () => {
    // A conversation's later calls take turns (a new conversation's first call takes none).
    const { convid } = await client.run(hello, { query: 'x' });
    for await (const event of client.stream(sleeper, {}, { convid })) {
      if (event.event === 'part') break; // the sleeper now holds its conversation (until cancelled)
    }
    const requestId = `busy-${Date.now()}`;
    const busyClient = new AgentexecClient({ baseUrl: stack.url, apiKey, headers: { 'X-Request-Id': requestId } });
    const events: RunEvent[] = [];
    await assert.rejects(
      (async () => {
        for await (const event of busyClient.stream(hello, { query: 'x' }, { convid })) events.push(event);
      })(),
      (err: unknown) => {
        assert.ok(err instanceof ConversationBusyError, String(err));
        assert.equal(err.code, 'conversationBusy');
        assert.equal(err.status, 409);
        assert.equal(err.requestId, requestId, 'the X-Request-Id of the stream');
        return true;
      },
    );
    assert.deepEqual(events.map((e) => e.event), ['start', 'error']);
    const error = events[1]!;
    assert.equal(error.event === 'error' && error.data.error.code, 'conversationBusy');
    await client.cancel({ convid });
  });

  it('throws errors as classes by code, with status and details', async () => {
    await assert.rejects(client.run(uniqueAgentName('missing')), (err: unknown) => {
      assert.ok(err instanceof NotFoundError && err instanceof AgentexecError);
      assert.equal(err.code, 'agentNotFound');
      assert.equal(err.status, 404);
      assert.match(err.requestId ?? '', /.+/);
      return true;
    });
    await assert.rejects(client.run('not a name!'), (err: unknown) => {
      assert.ok(err instanceof InvalidRequestError);
      assert.equal(err.status, 400);
      assert.ok('agentName' in err.fields, JSON.stringify(err.details));
      return true;
    });
    const anonymous = new AgentexecClient({ baseUrl: stack.url });
    await assert.rejects(anonymous.run(hello), (err: unknown) => err instanceof UnauthenticatedError && err.code === 'unauthenticated' && err.status === 401);
  });

  it('re-attaches a stream cut mid-way and yields every event exactly once, in order', async () => {
    const events: RunEvent[] = [];
    let cuts = 0;
    for await (const event of client.stream(ticker)) {
      events.push(event);
      // Cut the connection twice, while the agent is still ticking.
      if (event.event === 'part' && (event.data as { text: string }).text === `tick ${3 + cuts * 4}` && cuts < 2) {
        cuts += 1;
        proxy.dropConnections();
      }
    }
    assert.equal(cuts, 2);
    assert.deepEqual(
      events.map((e) => e.id),
      events.map((_, i) => i + 1),
      'ids 1, 2, 3… with none repeated or missing',
    );
    assert.deepEqual(
      events.map((e) => (e.event === 'part' ? (e.data as { text: string }).text : e.event)),
      ['start', ...Array.from({ length: 12 }, (_, i) => `tick ${i + 1}`), 'end'],
    );
    const end = events.at(-1)!;
    assert.equal(end.event === 'end' && end.data.resultCode, 'success');
    const retries = [...proxy.sent().matchAll(/^last-event-id: (\d+)\r$/gim)].map((m) => Number(m[1]));
    assert.ok(retries.length >= 2, 'each re-attach says which event it had last');
  });

  it('stops the run on the server when the caller aborts', async () => {
    const controller = new AbortController();
    let convid = '';
    await assert.rejects(
      (async () => {
        for await (const event of client.stream(sleeper, {}, { signal: controller.signal })) {
          if (event.event === 'start') convid = event.data.convid;
          if (event.event === 'part') controller.abort();
        }
      })(),
      (err: unknown) => (err as Error).name === 'AbortError',
    );
    await waitFor(
      async () => {
        const row = await stack.runtime.db.selectFrom('executions').select('result_code').where('convid', '=', convid).executeTakeFirst();
        return row?.result_code === 'stopped';
      },
      5000,
      'the run to end stopped',
    );
  });
});
