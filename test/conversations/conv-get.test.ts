import assert from 'node:assert/strict';
import { execAgent, post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

/** /api/conv/get (DESIGN §14): a conversation read back, turn by turn. */
describe('reading a conversation back', () => {
  let stack: Stack;
  let key: string;
  let otherKey: string;
  const echo = uniqueAgentName('echo');
  const login = uniqueAgentName('login');

  before(async () => {
    stack = await startStack();
    key = (await createAccount(stack.runtime.db)).key;
    otherKey = (await createAccount(stack.runtime.db)).key;
    await publishAgent(stack.runtime.db, echo, `export default async (sys) => { sys.say('echo ' + sys.query); }`);
    await publishAgent(
      stack.runtime.db,
      login,
      `export default async (sys) => {
        const { user, secret } = await sys.ask({ message: 'Sign in', inputs: [{ name: 'user', type: 'str' }, { name: 'secret', type: 'password' }] });
        sys.say('signed in ' + user + ' with ' + secret.length + ' characters');
      }`,
    );
  });
  after(() => stack.close());

  const get = (body: Record<string, unknown>, as = key) => post(stack.url, '/api/conv/get', body, { key: as });

  it('gives every turn with its query and output, oldest first, and the ask the conversation waits at', async () => {
    const first = await execAgent(stack.url, key, { agentName: echo, inputs: { query: 'one' } });
    const convid = first.body.convid;
    await execAgent(stack.url, key, { agentName: echo, convid, inputs: { query: 'two' } });
    const asked = await execAgent(stack.url, key, { agentName: login, convid, inputs: { query: 'three' } });
    assert.equal(asked.body.resultCode, 'ask');

    const paused = await get({ convid });
    assert.equal(paused.status, 200);
    assert.equal(paused.body.pausedBy, login);
    assert.equal(paused.body.askInput.message, 'Sign in');
    assert.equal(paused.body.pinned, false);
    assert.ok(Date.parse(paused.body.expiresAt) > Date.now());
    assert.deepEqual(
      paused.body.turns.map((t: any) => [t.agentName, t.query, t.resultCode, t.output]),
      [
        [echo, 'one', 'success', [{ type: 'text', text: 'echo one' }]],
        [echo, 'two', 'success', [{ type: 'text', text: 'echo two' }]],
        [login, 'three', 'ask', []],
      ],
    );
    assert.equal(paused.body.turns[0].runId.length, 36);

    const password = 'correct horse battery staple 42';
    const signedIn = await execAgent(stack.url, key, { agentName: login, convid, inputs: { user: 'ada', secret: password } });
    assert.equal(signedIn.body.resultCode, 'success');
    const after = await get({ convid });
    assert.equal(after.body.pausedBy, null);
    assert.equal('askInput' in after.body, false);
    assert.deepEqual(after.body.turns.at(-1).output, [{ type: 'text', text: `signed in ada with ${password.length} characters` }]);
    assert.equal(after.body.turns.at(-1).query, null, 'an answer to an ask is not a query');
    assert.equal(JSON.stringify(after.body).includes(password), false, 'a password answer never appears');
    const listed = (await post(stack.url, '/api/conv/list', {}, { key })).body.conversations.find((c: any) => c.convid === convid);
    assert.equal(listed.title, 'one', 'listed by the query that started it');
    assert.equal(listed.lastQuery, null);

    const page = await get({ convid, limit: 2 });
    assert.deepEqual(page.body.turns.map((t: any) => t.query), ['three', null]);
    const earlier = await get({ convid, limit: 2, before: page.body.turns[0].at });
    assert.deepEqual(earlier.body.turns.map((t: any) => t.query), ['one', 'two']);
  });

  it('is 404 for another caller’s conversation and an unknown one, and checks its body', async () => {
    const { convid } = (await execAgent(stack.url, key, { agentName: echo, inputs: { query: 'mine' } })).body;
    for (const answer of [await get({ convid }, otherKey), await get({ convid: crypto.randomUUID() })]) {
      assert.equal(answer.status, 404);
      assert.equal(answer.body.error.code, 'notFound');
    }
    const bad = await get({ convid: 'nope', limit: 501 });
    assert.equal(bad.status, 400);
    assert.deepEqual(Object.keys(bad.body.error.details.fields).sort(), ['convid', 'limit']);
  });
});
