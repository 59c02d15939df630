import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { randomUUID } from 'node:crypto';
import { findConversation } from '../../db/conversations.repository.js';
import { recordConversationRun } from '../../db/run-commit.repository.js';
import { execAgent } from '../helpers/api.js';
import { createAccount, publishAgent, successRecord, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { isRunActive, waitFor } from '../helpers/wait.js';

/**
 * DESIGN §11: a run holds no connection while the agent runs and commits only where the conversation
 * is still at the version it read. A stale writer commits nothing and its caller is told so.
 */
describe('the version fence', () => {
  let stack: Stack;
  let key: string;
  const counter = uniqueAgentName('counter');
  const slow = uniqueAgentName('slowWriter');

  before(async () => {
    stack = await startStack();
    key = (await createAccount(stack.runtime.db)).key;
    await publishAgent(stack.runtime.db, counter, `export default async (sys) => { sys.vars.n = (sys.vars.n ?? 0) + 1; }`);
    await publishAgent(
      stack.runtime.db,
      slow,
      `export default async (sys) => { sys.conv.writer = 'slow'; const from = sys.now(); await sys.sleep(Number(sys.inputs.ms ?? 800)); sys.vars.span = [from, sys.now()]; }`,
    );
  });
  after(() => stack.close());

  it('raises the version by one at each kept run', async () => {
    const first = await execAgent(stack.url, key, { agentName: counter });
    assert.equal((await findConversation(stack.runtime.db, first.body.convid))?.version, 0);
    await execAgent(stack.url, key, { agentName: counter, convid: first.body.convid });
    await execAgent(stack.url, key, { agentName: counter, convid: first.body.convid });
    assert.equal((await findConversation(stack.runtime.db, first.body.convid))?.version, 2);
  });

  it('holds no connection while the agent runs: on 2 connections, 20 runs wait at once', async () => {
    const small = await startStack({ DATABASE_POOL_SIZE: '2', WORKER_CONCURRENCY: '100', QUEUE_PREFIX: `${stack.config.queuePrefix}-small` });
    try {
      const convids = await Promise.all(Array.from({ length: 20 }, async () => (await execAgent(small.url, key, { agentName: counter })).body.convid as string));
      const answers = await Promise.all(convids.map((convid) => execAgent(small.url, key, { agentName: slow, convid, inputs: { ms: 1000 } })));
      assert.deepEqual(answers.map((a) => a.body.resultCode), Array(20).fill('success'));
      const spans = await Promise.all(convids.map(async (convid) => (await findConversation(small.runtime.db, convid))?.agent_vars[slow]?.span as [number, number]));
      const mostAtOnce = Math.max(...spans.map(([from]) => spans.filter(([start, end]) => start <= from && from < end).length));
      const t0 = Math.min(...spans.map((s) => s[0]));
      assert.ok(mostAtOnce > 10, `at most ${mostAtOnce} runs were waiting at once: ${JSON.stringify(spans.map(([a, b]) => [a - t0, b - t0]))}`);
    } finally {
      await small.close();
    }
  });

  it('answers 409 conversationBusy and keeps nothing when another writer committed from the same version meanwhile', async () => {
    const first = await execAgent(stack.url, key, { agentName: counter });
    const convid = first.body.convid as string;
    const running = execAgent(stack.url, key, { agentName: slow, convid });
    await waitFor(() => isRunActive(convid), 5000, 'the slow run to start');
    // Another writer commits first, from the version the slow run read.
    await sql`update conversations set conv_vars = '{"writer":"other"}', version = version + 1 where id = ${convid}`.execute(stack.runtime.db);
    const answer = await running;
    assert.equal(answer.status, 409);
    assert.equal(answer.body.error.code, 'conversationBusy');
    assert.match(answer.body.error.message, /changed while this call ran.*nothing of this call was kept/);
    const conversation = await findConversation(stack.runtime.db, convid);
    assert.deepEqual(conversation?.conv_vars, { writer: 'other' });
    assert.deepEqual(conversation?.agent_vars[slow], undefined);
    assert.equal(conversation?.history.length, 1);
    assert.equal(conversation?.version, 1);
  });

  it('commits once from a version: a second commit from the same version keeps nothing, not even its record or its pause', async () => {
    const first = await execAgent(stack.url, key, { agentName: counter });
    const convid = first.body.convid as string;
    const now = new Date();
    const commit = (writer: string, runId: string) =>
      recordConversationRun(stack.runtime.db, {
        convid,
        version: 0,
        state: { agentVars: {}, convVars: { writer }, ...entry(writer, now) },
        pause: { kind: 'save', pause: { convid, now, agentName: counter, agentVersion: 1, ask: { message: 'go on?', inputs: [] }, journal: [], startState: { inputs: {}, vars: {}, conv: {}, history: [], randomSeed: 1 } } },
        execution: successRecord(convid, runId, randomUUID(), now),
        now,
      });
    const [firstRun, secondRun] = [randomUUID(), randomUUID()];
    assert.equal(await commit('first', firstRun), 'committed');
    await sql`delete from paused_asks where convid = ${convid}`.execute(stack.runtime.db);
    assert.equal(await commit('second', secondRun), 'stale');
    const conversation = await findConversation(stack.runtime.db, convid);
    assert.deepEqual(conversation?.conv_vars, { writer: 'first' });
    assert.equal(conversation?.version, 1);
    const records = await sql<{ id: string }>`select id from executions where id in (${firstRun}, ${secondRun})`.execute(stack.runtime.db);
    assert.deepEqual(records.rows.map((row) => row.id), [firstRun]);
    const pauses = await sql`select 1 from paused_asks where convid = ${convid}`.execute(stack.runtime.db);
    assert.equal(pauses.rows.length, 0, 'the stale commit saved no pause');
  });
});

/** The history a first commit leaves, and its entry. */
function entry(query: string, at: Date) {
  const added = { agentName: 'counter', query, resultCode: 'ask' as const, at: at.toISOString() };
  return { history: [added], added };
}
