import assert from 'node:assert/strict';
import { post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { shardsOf } from '../../shared/shards.js';

/**
 * Fair start of waiting runs across callers (DESIGN §16) through the HTTP API, on a worker that runs
 * two at a time: a caller's one run starts before another caller's backlog drains, a heavier weight
 * starts more runs, and one caller's runs on a conversation keep their order.
 */
describe('fair share of the workers', function () {
  this.timeout(60_000);
  let stack: Stack;
  let adminKey: string;
  const sleeper = uniqueAgentName('sleeper');

  before(async () => {
    stack = await startStack({ WORKER_CONCURRENCY: '2', MAX_AGENT_RUNTIME_MS: '20000' });
    adminKey = (await createAccount(stack.runtime.db, 'admin')).key;
    await publishAgent(stack.runtime.db, sleeper, `export default async (sys) => { await sys.sleep(Number(sys.inputs.ms)); sys.say(String(sys.inputs.n ?? '')); }`);
  });
  after(() => stack.close());

  const submit = async (key: string, inputs: Record<string, unknown>, convid?: string) => {
    const res = await post(stack.url, '/api/exec/submit', { agentName: sleeper, inputs, ...(convid ? { convid } : {}) }, { key });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    return res.body as { runId: string; convid: string };
  };
  const statusOf = async (key: string, runId: string) => ((await post(stack.url, '/api/exec/getRun', { runId }, { key })).body as { status: string }).status;
  const waitEnded = async (key: string, runId: string) => {
    for (;;) {
      const res = await post(stack.url, '/api/exec/wait', { runId, timeoutMs: 20_000 }, { key });
      if ((res.body as { status: string }).status === 'ended') return res.body as { response: { resultCode: string } };
    }
  };

  it("starts a caller's one run before another caller's backlog of 40 drains", async () => {
    const flooder = (await createAccount(stack.runtime.db)).key;
    const other = (await createAccount(stack.runtime.db)).key;
    const backlog: string[] = [];
    for (let i = 0; i < 40; i++) backlog.push((await submit(flooder, { ms: 300 })).runId);
    const mine = await submit(other, { ms: 10 });
    assert.equal((await waitEnded(other, mine.runId)).response.resultCode, 'success');
    const statuses = await Promise.all(backlog.map((runId) => statusOf(flooder, runId)));
    const waiting = statuses.filter((status) => status === 'queued').length;
    // First come, first served, it would have ended after all 40 (two at a time, 0.3 s each: 6 s).
    assert.ok(waiting >= 20, `the backlog still had ${waiting} of 40 queued when the other caller's run ended`);
    await Promise.all(backlog.map((runId) => waitEnded(flooder, runId)));
  });

  it('starts more runs of a caller with a heavier weight while both wait', async () => {
    const light = await createAccount(stack.runtime.db);
    const heavy = await createAccount(stack.runtime.db);
    assert.equal((await post(stack.url, '/api/admin/setLimits', { name: heavy.name, weight: 4 }, { key: adminKey })).status, 200);
    const lightRuns: string[] = [];
    const heavyRuns: string[] = [];
    // Both backlogs queued before either drains: the worker holds two at a time, each 0.2 s.
    for (let i = 0; i < 20; i++) {
      lightRuns.push((await submit(light.key, { ms: 200 })).runId);
      heavyRuns.push((await submit(heavy.key, { ms: 200 })).runId);
    }
    // When the light caller's 10th run has ended, the heavy caller has had four times the share.
    await waitEnded(light.key, lightRuns[9]!);
    const heavyEnded = (await Promise.all(heavyRuns.map((runId) => statusOf(heavy.key, runId)))).filter((status) => status === 'ended').length;
    assert.ok(heavyEnded >= 18, `only ${heavyEnded} of the heavy caller's 20 runs had ended by the light caller's 10th`);
    await Promise.all([...lightRuns.map((runId) => waitEnded(light.key, runId)), ...heavyRuns.map((runId) => waitEnded(heavy.key, runId))]);
  });

  it("keeps one caller's calls on a conversation in their order, whatever their priority", async () => {
    const caller = (await createAccount(stack.runtime.db)).key;
    const first = await submit(caller, { ms: 50, n: 0 });
    await waitEnded(caller, first.runId);
    const runs: string[] = [];
    for (let n = 1; n <= 6; n++) runs.push((await submit(caller, { ms: 50, n }, first.convid)).runId);
    for (const runId of runs) await waitEnded(caller, runId);
    const turns = (await post(stack.url, '/api/conv/get', { convid: first.convid }, { key: caller })).body as { turns: { output: { text: string }[] }[] };
    assert.deepEqual(
      turns.turns.map((turn) => turn.output[0]?.text),
      ['0', '1', '2', '3', '4', '5', '6'],
    );
  });
});

/** The same across shards (DESIGN §17): every worker works every shard's queue, in one fair order. */
describe('fair share of the workers across shards (REDIS_SHARDS=3)', function () {
  this.timeout(60_000);
  let stack: Stack;
  const sleeper = uniqueAgentName('sleeper');

  before(async () => {
    stack = await startStack({ WORKER_CONCURRENCY: '2', MAX_AGENT_RUNTIME_MS: '20000', REDIS_SHARDS: '3' });
    await publishAgent(stack.runtime.db, sleeper, `export default async (sys) => { await sys.sleep(Number(sys.inputs.ms)); }`);
  });
  after(() => stack.close());

  /** A background run of the caller's on `shard`: runs that land elsewhere are cancelled (withdrawn while queued). */
  const submitOn = async (key: string, shard: number, ms: number): Promise<string> => {
    for (;;) {
      const res = await post(stack.url, '/api/exec/submit', { agentName: sleeper, inputs: { ms } }, { key });
      assert.equal(res.status, 202, JSON.stringify(res.body));
      const { runId } = res.body as { runId: string };
      if (shardsOf(stack.config).of(runId) === shard) return runId;
      assert.equal((await post(stack.url, '/api/exec/cancel', { runId }, { key })).status, 200);
    }
  };
  const statusOf = async (key: string, runId: string) => ((await post(stack.url, '/api/exec/getRun', { runId }, { key })).body as { status: string }).status;
  const waitEnded = async (key: string, runId: string) => {
    for (;;) {
      const res = await post(stack.url, '/api/exec/wait', { runId, timeoutMs: 20_000 }, { key });
      if ((res.body as { status: string }).status === 'ended') return res.body as { response: { resultCode: string } };
    }
  };

  it("starts a caller's one run on shard 2 before another caller's backlog of 30 on shard 1 drains", async () => {
    const flooder = (await createAccount(stack.runtime.db)).key;
    const other = (await createAccount(stack.runtime.db)).key;
    const backlog: string[] = [];
    for (let i = 0; i < 30; i++) backlog.push(await submitOn(flooder, 1, 300));
    const mine = await submitOn(other, 2, 10);
    assert.equal((await waitEnded(other, mine)).response.resultCode, 'success');
    const statuses = await Promise.all(backlog.map((runId) => statusOf(flooder, runId)));
    const waiting = statuses.filter((status) => status === 'queued').length;
    // Shard by shard, it would have ended after all 30 (two at a time, 0.3 s each: 4.5 s).
    assert.ok(waiting >= 15, `the backlog still had ${waiting} of 30 queued when the other caller's run ended`);
    await Promise.all(backlog.map((runId) => waitEnded(flooder, runId)));
  });
});
