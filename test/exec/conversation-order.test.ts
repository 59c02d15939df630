import assert from 'node:assert/strict';
import { findConversation } from '../../db/conversations.repository.js';
import { execAgent } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

describe('the conversation is an actor', () => {
  let stack: Stack;
  let key: string;
  const counter = uniqueAgentName('counter');
  const holder = uniqueAgentName('holder');

  before(async () => {
    stack = await startStack({ WORKER_CONCURRENCY: '8' });
    key = (await createAccount(stack.runtime.db)).key;
    await publishAgent(stack.runtime.db, counter, `export default async (sys) => { const n = (sys.vars.n ?? 0) + 1; await sys.sleep(1); sys.vars.n = n; sys.say(String(n)); }`);
    await publishAgent(stack.runtime.db, holder, `export default async (sys) => { await sys.sleep(500); }`);
  });
  after(() => stack.close());

  it('runs 50 concurrent increments one at a time: the variable ends at 50, with a history of 50 in order', async () => {
    const first = await execAgent(stack.url, key, { agentName: counter, inputs: { query: 'call 0' } });
    const convid = first.body.convid;
    const calls = await Promise.all(Array.from({ length: 49 }, (_, i) => execAgent(stack.url, key, { agentName: counter, convid, inputs: { query: `call ${i + 1}` } })));
    assert.deepEqual(calls.map((c) => c.status), Array(49).fill(200));
    const conversation = await findConversation(stack.runtime.db, convid);
    assert.deepEqual(conversation?.agent_vars[counter], { n: 50 });
    assert.equal(conversation?.history.length, 50);
    // Each call saw the count its place in the history implies.
    const seen = new Map<string, number>([['call 0', 1], ...calls.map((c, i) => [`call ${i + 1}`, Number(c.body.output[0].text)] as [string, number])]);
    assert.deepEqual(conversation?.history.map((entry) => seen.get(entry.query!)), Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it('runs calls in the order they arrived', async () => {
    const first = await execAgent(stack.url, key, { agentName: counter });
    const convid = first.body.convid;
    const held = execAgent(stack.url, key, { agentName: holder, convid });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const calls = [];
    for (let i = 0; i < 12; i++) {
      calls.push(execAgent(stack.url, key, { agentName: counter, convid }));
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
    assert.equal((await held).body.resultCode, 'success');
    const counts = (await Promise.all(calls)).map((c) => Number(c.body.output[0].text));
    assert.deepEqual(counts, Array.from({ length: 12 }, (_, i) => i + 2));
  });
});
