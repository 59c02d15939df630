import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { runQueueName } from '../../shared/channels.js';
import { findConversation } from '../../db/conversations.repository.js';
import { execAgent } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { testEnv } from '../helpers/test-env.js';
import { ticketsTaken, waitFor } from '../helpers/wait.js';

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
    // Each call is sent once the one before it has arrived (taken its ticket on the conversation).
    const arrived = (tickets: number, what: string) => waitFor(async () => (await ticketsTaken(convid, stack.config.queuePrefix)) >= tickets, 5_000, what);
    const before = await ticketsTaken(convid, stack.config.queuePrefix);
    const held = execAgent(stack.url, key, { agentName: holder, convid });
    await arrived(before + 1, 'the holder to arrive');
    const calls = [];
    for (let i = 0; i < 12; i++) {
      calls.push(execAgent(stack.url, key, { agentName: counter, convid }));
      await arrived(before + 2 + i, `counter ${i + 1} to arrive`);
    }
    assert.equal((await held).body.resultCode, 'success');
    const counts = (await Promise.all(calls)).map((c) => Number(c.body.output[0].text));
    assert.deepEqual(counts, Array.from({ length: 12 }, (_, i) => i + 2));
  });

  it('runs a call handed the conversation while the call before it commits again from what is kept, when that commit keeps nothing; nothing of its first try gets out', async () => {
    const name = uniqueAgentName('fetching-counter');
    await publishAgent(stack.runtime.db, name, `export default async (sys) => { const n = (sys.vars.n ?? 0) + 1; sys.vars.n = n; await sys.fetch(sys.inputs.url + '?n=' + n + '&q=' + sys.inputs.query); sys.say(String(n)); }`);
    const requests: string[] = [];
    let answerTwo!: () => void;
    const twoMayGoOn = new Promise<void>((resolve) => (answerTwo = resolve));
    const server = createServer((req, res) => {
      requests.push(req.url ?? '');
      if (req.url?.endsWith('q=two')) void twoMayGoOn.then(() => res.end('ok'));
      else res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const queue = new Queue(runQueueName, { connection: new Redis(testEnv.REDIS_URL!, { maxRetriesPerRequest: null }), prefix: stack.config.queuePrefix });
    const db = stack.runtime.db;
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const convid = (await execAgent(stack.url, key, { agentName: name, inputs: { url, query: 'one' } })).body.convid;
      await db.connection().execute(async (writer) => {
        // Another writer holds the conversation's row: call two's commit will wait for it.
        await sql`begin`.execute(writer);
        await sql`select 1 from conversations where id = ${convid} for update`.execute(writer);
        const two = execAgent(stack.url, key, { agentName: name, convid, inputs: { url, query: 'two' } });
        await waitFor(() => requests.some((request) => request.endsWith('q=two')), 5_000, 'call two to fetch');
        const three = execAgent(stack.url, key, { agentName: name, convid, inputs: { url, query: 'three' } });
        await waitFor(async () => (await queue.getActiveCount()) === 2, 5_000, 'call three to wait in the worker behind call two');
        answerTwo();
        // Call two's commit waits for the row; call three was handed the conversation as call two left it (n = 2).
        await waitFor(
          async () => (await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`.execute(db)).rows[0]!.n > 0,
          5_000,
          'call two to commit',
        );
        // The writer moves the conversation on: call two's commit keeps nothing, so neither may call three's first try.
        await sql`update conversations set version = version + 1 where id = ${convid}`.execute(writer);
        await sql`commit`.execute(writer);
        const [twoAnswer, threeAnswer] = await Promise.all([two, three]);
        assert.equal(twoAnswer.status, 409);
        assert.equal(twoAnswer.body.error.code, 'conversationBusy');
        assert.equal(threeAnswer.status, 200);
        assert.deepEqual(threeAnswer.body.output, [{ type: 'text', text: '2' }], 'it ran again from n = 1, as kept');
      });
      assert.deepEqual(requests, ['/?n=1&q=one', '/?n=2&q=two', '/?n=2&q=three'], 'its first try (n = 3) never fetched');
      assert.deepEqual((await findConversation(db, convid))?.agent_vars[name], { n: 2 });
    } finally {
      server.close();
      await queue.close();
    }
  });
});
