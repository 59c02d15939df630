import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { execAgent } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

describe('max runtime through the API', () => {
  let stack: Stack;
  let key: string;
  let slow: Server;
  let slowUrl: string;
  const agents = { busy: uniqueAgentName('busy'), sleeper: uniqueAgentName('sleeper'), fetcher: uniqueAgentName('fetcher'), hello: uniqueAgentName('hello') };

  before(async () => {
    slow = createServer((_req, res) => void setTimeout(() => res.end('late'), 5000)).listen(0, '127.0.0.1');
    await new Promise((resolve) => slow.once('listening', resolve));
    const address = slow.address();
    slowUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`;
    stack = await startStack({ MAX_AGENT_RUNTIME_MS: '700', WORKER_CONCURRENCY: '1' });
    key = (await createAccount(stack.runtime.db)).key;
    const db = stack.runtime.db;
    await publishAgent(db, agents.busy, `export default async (sys) => { sys.say('a'); for (;;) {} }`);
    await publishAgent(db, agents.sleeper, `export default async (sys) => { await sys.sleep(3000); sys.say('woke'); }`);
    await publishAgent(db, agents.fetcher, `export default async (sys) => { const r = await sys.fetch(sys.inputs.url); sys.say(r.text); }`);
    await publishAgent(db, agents.hello, `export default async (sys) => sys.say('hello')`);
  });
  after(async () => {
    await stack.close();
    slow.closeAllConnections();
    slow.close();
  });

  for (const [what, agent] of [
    ['a busy loop', agents.busy],
    ['a long sleep', agents.sleeper],
    ['a slow fetch', agents.fetcher],
  ] as const) {
    it(`ends ${what} with timedOut, and the (single) worker slot serves the next call`, async () => {
      const res = await execAgent(stack.url, key, { agentName: agent, inputs: { url: slowUrl } });
      assert.equal(res.body.resultCode, 'timedOut');
      assert.match(res.body.error.message, /700 ms/);
      const next = await execAgent(stack.url, key, { agentName: agents.hello });
      assert.equal(next.body.resultCode, 'success');
    });
  }
});
