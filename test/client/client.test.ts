import assert from 'node:assert/strict';
import {
  AgentexecClient,
  AgentexecError,
  InvalidRequestError,
  NotFoundError,
  UnauthenticatedError,
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
  const hello = uniqueAgentName('hello');
  const ticker = uniqueAgentName('ticker');
  const sleeper = uniqueAgentName('sleeper');
  const asker = uniqueAgentName('asker');

  before(async () => {
    stack = await startStack({ MAX_AGENT_RUNTIME_MS: '20000' });
    const port = new URL(stack.url).port;
    proxy = await startTcpProxy('127.0.0.1', Number(port));
    const db = stack.runtime.db;
    const { key } = await createAccount(db);
    client = new AgentexecClient({ baseUrl: `http://127.0.0.1:${proxy.port}`, apiKey: key });
    await publishAgent(db, hello, `export default async (sys) => { sys.vars.n = (sys.vars.n ?? 0) + 1; sys.say('hello ' + sys.query + ' ' + sys.vars.n); }`);
    await publishAgent(db, ticker, `export default async (sys) => { for (let i = 1; i <= 12; i++) { sys.say('tick ' + i); await sys.sleep(60); } }`);
    await publishAgent(db, sleeper, `export default async (sys) => { sys.say('sleeping'); await sys.sleep(60000); }`);
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
    const answered = await client.answer(paused.convid, asker, { name: 'Grace' });
    assert.deepEqual(answered.output, [{ type: 'text', text: 'hi Grace' }]);
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
