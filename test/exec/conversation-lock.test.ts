import assert from 'node:assert/strict';
import { findConversation } from '../../db/conversations.repository.js';
import { execAgent } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { isRunActive, waitFor } from '../helpers/wait.js';

describe('one call at a time per conversation', () => {
  let stack: Stack;
  let key: string;
  const counter = uniqueAgentName('counter');
  const slow = uniqueAgentName('slow');

  before(async () => {
    stack = await startStack({ CONV_WAIT_MS: '300' });
    key = (await createAccount(stack.runtime.db)).key;
    await publishAgent(stack.runtime.db, counter, `export default async (sys) => { const n = (sys.vars.n ?? 0) + 1; await sys.sleep(10); sys.vars.n = n; }`);
    await publishAgent(stack.runtime.db, slow, `export default async (sys) => { await sys.sleep(1500); sys.vars.slept = true; }`);
  });
  after(() => stack.close());

  it('serialises concurrent calls on one conversation so no update is lost', async () => {
    const first = await execAgent(stack.url, key, { agentName: counter });
    const results = await Promise.all(Array.from({ length: 6 }, () => execAgent(stack.url, key, { agentName: counter, convid: first.body.convid })));
    assert.deepEqual(results.map((r) => r.body.resultCode), Array(6).fill('success'));
    const conversation = await findConversation(stack.runtime.db, first.body.convid);
    assert.deepEqual(conversation?.agent_vars[counter], { n: 7 });
    assert.equal(conversation?.history.length, 7);
  });

  it('answers 409 conversationBusy to a call that cannot start within CONV_WAIT_MS, changing nothing', async () => {
    const first = await execAgent(stack.url, key, { agentName: counter });
    const running = execAgent(stack.url, key, { agentName: slow, convid: first.body.convid });
    await waitFor(() => isRunActive(first.body.convid), 5000, 'the slow call to hold the conversation');
    const busy = await execAgent(stack.url, key, { agentName: counter, convid: first.body.convid });
    assert.equal(busy.status, 409);
    assert.equal(busy.body.error.code, 'conversationBusy');
    assert.equal((await running).body.resultCode, 'success');
    const conversation = await findConversation(stack.runtime.db, first.body.convid);
    assert.deepEqual(conversation?.agent_vars[counter], { n: 1 }, 'the refused call did not run');
  });
});
