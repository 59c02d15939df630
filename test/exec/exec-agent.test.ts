import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { findConversation } from '../../db/conversations.repository.js';
import { execAgent } from '../helpers/api.js';
import { openStream } from '../helpers/sse.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

describe('execAgent', () => {
  let stack: Stack;
  let key: string;
  const agents: Record<string, string> = {};

  const sources: Record<string, string> = {
    hello: `export default async function (sys) {
      sys.vars.count = (sys.vars.count ?? 0) + 1;
      sys.conv.lastGreeter = sys.agentName;
      sys.say('Hello, ' + (sys.query ?? 'world') + ' #' + sys.vars.count);
      sys.html('<b>hi</b>');
      sys.image('aGVsbG8=', 'image/png');
      sys.write('streamed ');
      sys.write('text');
    }`,
    reader: `export default async function (sys) {
      sys.say(JSON.stringify({ vars: sys.vars, conv: sys.conv, history: sys.history.map(h => [h.agentName, h.query, h.resultCode]), caller: sys.caller, convid: sys.convid }));
    }`,
    failing: `export default async function (sys) {
      sys.vars.touched = true;
      sys.conv.touched = true;
      sys.say('before the failure');
      sys.fail('the agent gave up');
    }`,
    typeError: `export default async function (sys) { sys.vars.touched = true; (undefined as any).boom(); }`,
    throwing: `export default async function (sys) { throw new Error('something odd'); }`,
    envReader: `export default async function (sys) { sys.say(String(process.env.SECRETS_KEY)); }`,
    fetchRefused: `export default async function (sys) { await sys.fetch('http://10.1.2.3/'); }`,
    noDefault: `export const notTheAgent = 1;`,
  };

  before(async () => {
    stack = await startStack();
    key = (await createAccount(stack.runtime.db)).key;
    for (const [base, source] of Object.entries(sources)) {
      agents[base] = uniqueAgentName(base);
      await publishAgent(stack.runtime.db, agents[base]!, source);
    }
  });
  after(() => stack.close());

  it('runs an agent and answers its output parts in order with a new convid', async () => {
    const res = await execAgent(stack.url, key, { agentName: agents.hello, inputs: { query: 'Ada' } });
    assert.equal(res.status, 200);
    assert.equal(res.body.resultCode, 'success');
    assert.equal(res.body.agentName, agents.hello);
    assert.match(res.body.convid, /^[0-9a-f-]{36}$/);
    assert.deepEqual(res.body.output, [
      { type: 'text', text: 'Hello, Ada #1' },
      { type: 'html', html: '<b>hi</b>' },
      { type: 'image', mimeType: 'image/png', data: 'aGVsbG8=' },
      { type: 'text', text: 'streamed text' },
    ]);
    assert.equal(res.body.askInput, undefined);
    assert.equal(res.body.error, undefined);
    assert.ok(res.headers.get('x-request-id'));
  });

  it('restores agent variables, conversation variables and history when the conversation continues', async () => {
    const first = await execAgent(stack.url, key, { agentName: agents.hello, inputs: { query: 'one' } });
    const second = await execAgent(stack.url, key, { agentName: agents.hello, convid: first.body.convid, inputs: { query: 'two' } });
    assert.equal(second.body.output[0].text, 'Hello, two #2');
    assert.equal(second.body.convid, first.body.convid);
  });

  it('lets another agent continue the conversation: shared conversation variables, its own agent variables', async () => {
    const first = await execAgent(stack.url, key, { agentName: agents.hello, inputs: { query: 'q1' } });
    const read = await execAgent(stack.url, key, { agentName: agents.reader, convid: first.body.convid, inputs: { query: 'q2' } });
    assert.equal(read.body.resultCode, 'success');
    const seen = JSON.parse(read.body.output[0].text);
    assert.deepEqual(seen.vars, {}, 'the reader has no agent variables of its own yet');
    assert.deepEqual(seen.conv, { lastGreeter: agents.hello });
    assert.deepEqual(seen.history, [[agents.hello, 'q1', 'success']]);
    assert.equal(seen.caller.kind, 'serviceAccount');
    assert.equal(seen.convid, first.body.convid);
  });

  it('keeps nothing of a failing run: failCommand with its message and the variables unchanged', async () => {
    const first = await execAgent(stack.url, key, { agentName: agents.hello });
    const failed = await execAgent(stack.url, key, { agentName: agents.failing, convid: first.body.convid });
    assert.equal(failed.body.resultCode, 'failCommand');
    assert.equal(failed.body.error.message, 'the agent gave up');
    assert.deepEqual(failed.body.output, [{ type: 'text', text: 'before the failure' }]);
    const conversation = await findConversation(stack.runtime.db, first.body.convid);
    assert.deepEqual(conversation?.conv_vars, { lastGreeter: agents.hello });
    assert.equal(conversation?.agent_vars[agents.failing!], undefined);
    assert.equal(conversation?.history.length, 1);
  });

  it('creates an empty conversation when the first run of a new one fails', async () => {
    const failed = await execAgent(stack.url, key, { agentName: agents.failing });
    assert.equal(failed.body.resultCode, 'failCommand');
    const conversation = await findConversation(stack.runtime.db, failed.body.convid);
    assert.deepEqual(conversation?.agent_vars, {});
    assert.deepEqual(conversation?.conv_vars, {});
    const next = await execAgent(stack.url, key, { agentName: agents.hello, convid: failed.body.convid });
    assert.equal(next.body.resultCode, 'success');
  });

  it('maps errors to result codes: errorInAgent, unexpected, callFailed', async () => {
    const typeError = await execAgent(stack.url, key, { agentName: agents.typeError });
    assert.equal(typeError.body.resultCode, 'errorInAgent');
    assert.match(typeError.body.error.message, /TypeError/);
    const thrown = await execAgent(stack.url, key, { agentName: agents.throwing });
    assert.equal(thrown.body.resultCode, 'unexpected');
    assert.match(thrown.body.error.message, /something odd/);
    const refused = await execAgent(stack.url, key, { agentName: agents.fetchRefused });
    assert.equal(refused.body.resultCode, 'callFailed');
    const noDefault = await execAgent(stack.url, key, { agentName: agents.noDefault });
    assert.equal(noDefault.body.resultCode, 'errorInAgent');
  });

  it('places a run-time error at its line and column in the agent\'s own TypeScript source', async () => {
    const name = uniqueAgentName('located');
    const source = [
      'interface Shape { size: number }',
      'export default async function (sys: any): Promise<void> {',
      '  const shape: Shape | undefined = undefined;',
      '  sys.say("about to fail");',
      '  const size: number = (shape as any).size;',
      '  sys.say(String(size));',
      '}',
    ].join('\n');
    await publishAgent(stack.runtime.db, name, source);
    const res = await execAgent(stack.url, key, { agentName: name });
    assert.equal(res.body.resultCode, 'errorInAgent');
    assert.equal(res.body.error.line, 5);
    assert.equal(res.body.error.column, 39, 'at the property read, as V8 reports it');
  });

  it('gives agent code no process: reading process.env ends errorInAgent and leaks nothing', async () => {
    const res = await execAgent(stack.url, key, { agentName: agents.envReader });
    assert.equal(res.body.resultCode, 'errorInAgent');
    assert.match(res.body.error.message, /process is not defined/);
    assert.ok(!JSON.stringify(res.body).includes(stack.config.secretsKey!));
  });

  it('answers unknownConversation for a convid owned by another account, and leaves it unchanged', async () => {
    const mine = await execAgent(stack.url, key, { agentName: agents.hello });
    const other = await createAccount(stack.runtime.db);
    const theirs = await execAgent(stack.url, other.key, { agentName: agents.hello, convid: mine.body.convid });
    assert.equal(theirs.status, 200);
    assert.equal(theirs.body.resultCode, 'unknownConversation');
    assert.deepEqual(theirs.body.output, []);
    const conversation = await findConversation(stack.runtime.db, mine.body.convid);
    assert.equal((conversation?.agent_vars[agents.hello!] as { count: number }).count, 1);
  });

  it('answers unknownConversation for a convid nobody made', async () => {
    const res = await execAgent(stack.url, key, { agentName: agents.hello, convid: '00000000-0000-4000-8000-000000000000' });
    assert.equal(res.body.resultCode, 'unknownConversation');
    assert.equal(await findConversation(stack.runtime.db, '00000000-0000-4000-8000-000000000000'), undefined);
  });

  it('answers 404 agentNotFound for an agent nobody published, creating nothing', async () => {
    const res = await execAgent(stack.url, key, { agentName: 'noSuchAgentHere' });
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'agentNotFound');
  });

  it('runs the newest published version of an agent', async () => {
    const name = uniqueAgentName('versioned');
    await publishAgent(stack.runtime.db, name, `export default async (sys) => sys.say('v1')`);
    await publishAgent(stack.runtime.db, name, `export default async (sys) => sys.say('v2')`);
    const res = await execAgent(stack.url, key, { agentName: name });
    assert.equal(res.body.output[0].text, 'v2');
  });

  it('runs a version published after this worker last ran the agent, and nothing of the version it ran before reaches the outside', async () => {
    // The worker starts a new conversation's run on the version it last read while it reads the latest
    // again: the run it started on version 1 must be stopped before its fetch or its parts get out.
    const requests: string[] = [];
    const server = createServer((req, res) => {
      requests.push(req.url ?? '');
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const name = uniqueAgentName('republished');
      await publishAgent(stack.runtime.db, name, `export default async (sys) => { sys.say('v1'); sys.write(' streamed'); await sys.fetch(sys.inputs.url + 'v1'); sys.say('v1 fetched'); }`);
      const first = await execAgent(stack.url, key, { agentName: name, inputs: { url } });
      assert.deepEqual(first.body.output, [{ type: 'text', text: 'v1 streamed' }, { type: 'text', text: 'v1 fetched' }]);
      assert.deepEqual(requests, ['/v1']);

      // Straight into PostgreSQL, as an operator's script would: the worker hears nothing of it.
      await publishAgent(stack.runtime.db, name, `export default async (sys) => { sys.say('v2'); await sys.fetch(sys.inputs.url + 'v2'); }`);
      const stream = await openStream(stack.url, '/api/exec/execAgent', { agentName: name, inputs: { url }, stream: true }, { key });
      const events = await stream.done;
      const end = events.find((event) => event.event === 'end');
      assert.equal(end?.data.resultCode, 'success');
      assert.deepEqual(
        events.filter((event) => event.event === 'part' || event.event === 'delta').map((event) => event.data.text),
        ['v2'],
      );
      // The call has ended: the stopped run's fetch, had it been let out, came before its end.
      assert.deepEqual(requests, ['/v1', '/v2']);
      const record = await stack.runtime.db.selectFrom('executions').select('agent_version').where('convid', '=', end?.data.convid).executeTakeFirstOrThrow();
      assert.equal(record.agent_version, 2);
    } finally {
      server.close();
    }
  });

  it('runs a version published after this worker last ran the agent when the run reaches nothing outside: its commit keeps nothing of the older one', async () => {
    // A run that makes no async sys call is not confirmed by a read: its commit is fenced on the version
    // it started on, and the newer version makes it keep nothing, so the call runs again on that one.
    const name = uniqueAgentName('republished-quiet');
    await publishAgent(stack.runtime.db, name, `export default async (sys) => { sys.vars.by = 'v1'; sys.say('v1'); }`);
    const first = await execAgent(stack.url, key, { agentName: name });
    assert.deepEqual(first.body.output, [{ type: 'text', text: 'v1' }]);

    // Straight into PostgreSQL, as an operator's script would: the worker hears nothing of it.
    await publishAgent(stack.runtime.db, name, `export default async (sys) => { sys.vars.by = 'v2'; sys.say('v2'); }`);
    const stream = await openStream(stack.url, '/api/exec/execAgent', { agentName: name, stream: true }, { key });
    const events = await stream.done;
    const end = events.find((event) => event.event === 'end');
    assert.equal(end?.data.resultCode, 'success');
    assert.deepEqual(
      events.filter((event) => event.event === 'part').map((event) => event.data.text),
      ['v2'],
    );
    const convid = end?.data.convid as string;
    const records = await stack.runtime.db.selectFrom('executions').select('agent_version').where('convid', '=', convid).execute();
    assert.deepEqual(records, [{ agent_version: 2 }]);
    const conversation = await findConversation(stack.runtime.db, convid);
    assert.deepEqual(conversation?.agent_vars, { [name]: { by: 'v2' } });
  });
});
