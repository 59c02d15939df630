import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { runQueueName } from '../../shared/channels.js';
import type { RunJobData } from '../../shared/jobs.js';
import { upsertCallerLimits } from '../../db/caller-limits.repository.js';
import { execAgent, post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { testEnv } from '../helpers/test-env.js';
import { waitFor } from '../helpers/wait.js';

/** sys.call (DESIGN §19): agents that call agents, through the real API, queue and worker. */
describe('agents that call agents', function () {
  this.timeout(60_000);
  let stack: Stack;
  let key: string;
  let queue: Queue<RunJobData>;
  const names = {
    echo: uniqueAgentName('echo'),
    sleeper: uniqueAgentName('sleeper'),
    fanOut: uniqueAgentName('fanout'),
    asksAfter: uniqueAgentName('asksafter'),
    asksWhile: uniqueAgentName('askswhile'),
    waiter: uniqueAgentName('waiter'),
    greeter: uniqueAgentName('greeter'),
    answers: uniqueAgentName('answers'),
    nest: uniqueAgentName('nest'),
    caller: uniqueAgentName('caller'),
  };

  before(async () => {
    stack = await startStack();
    key = (await createAccount(stack.runtime.db)).key;
    queue = new Queue(runQueueName, { connection: new Redis(testEnv.REDIS_URL!, { maxRetriesPerRequest: null }), prefix: stack.config.queuePrefix });
    const db = stack.runtime.db;
    await publishAgent(db, names.echo, `export default async (sys) => { sys.vars.n = (sys.vars.n ?? 0) + 1; sys.say('echo ' + sys.query + ' #' + sys.vars.n); }`);
    await publishAgent(db, names.sleeper, `export default async (sys) => { await sys.sleep(sys.inputs.ms ?? 300); sys.say('slept ' + sys.inputs.ms); }`);
    await publishAgent(
      db,
      names.fanOut,
      `export default async (sys) => {
        const results = await Promise.all([400, 300, 200].map((ms) => sys.call(${JSON.stringify(names.sleeper)}, { ms })));
        sys.vars.children = results.map((r) => r.runId);
        sys.say(results.map((r) => r.resultCode + ':' + r.output[0].text).join(', '));
      }`,
    );
    await publishAgent(
      db,
      names.asksAfter,
      `export default async (sys) => {
        const found = await Promise.all(['a', 'b'].map((query) => sys.call(${JSON.stringify(names.echo)}, { query })));
        const { go } = await sys.ask({ message: 'Go on?', inputs: [{ name: 'go', type: 'str' }] });
        sys.say(found.map((r) => r.output[0].text).join(', ') + ' then ' + go);
      }`,
    );
    await publishAgent(
      db,
      names.asksWhile,
      `export default async (sys) => {
        const pending = sys.call(${JSON.stringify(names.sleeper)}, { ms: 1500 });
        const { go } = await sys.ask({ message: 'Go on?', inputs: [{ name: 'go', type: 'str' }] });
        const done = await pending;
        sys.say(done.resultCode + ' ' + done.runId + ' ' + go);
      }`,
    );
    await publishAgent(
      db,
      names.waiter,
      `export default async (sys) => {
        const results = await Promise.all([0, 1].map(() => sys.call(${JSON.stringify(names.sleeper)}, { ms: 20000 })));
        sys.say(results.map((r) => r.resultCode).join());
      }`,
    );
    await publishAgent(
      db,
      names.greeter,
      `export default async (sys) => {
        const { name } = await sys.ask({ message: 'Who?', inputs: [{ name: 'name', type: 'str', label: 'Name' }] });
        sys.say('Hello ' + name);
      }`,
    );
    await publishAgent(
      db,
      names.answers,
      `export default async (sys) => {
        const first = await sys.call(${JSON.stringify(names.greeter)});
        const second = await sys.call(${JSON.stringify(names.greeter)}, { name: 'Ada' }, { convid: first.convid });
        sys.say(JSON.stringify({ first, second }));
      }`,
    );
    await publishAgent(
      db,
      names.nest,
      `export default async (sys) => {
        const depth = sys.inputs.depth ?? 0;
        const child = await sys.call(${JSON.stringify(names.nest)}, { depth: depth + 1 });
        if (child.resultCode === 'success') sys.say(child.output[0].text);
        else sys.say(JSON.stringify({ depth, child: child.resultCode, message: child.error?.message }));
      }`,
    );
    await publishAgent(
      db,
      names.caller,
      `export default async (sys) => {
        const { agentName, inputs, convid, circular } = sys.inputs;
        let args = inputs;
        if (circular) { args = {}; args.self = args; }
        try {
          const result = await sys.call(agentName, args, convid === undefined ? undefined : { convid });
          sys.say(JSON.stringify(result));
        } catch (err) {
          sys.say('threw ' + (err instanceof TypeError ? 'TypeError' : String(err)));
        }
      }`,
    );
  });
  after(async () => {
    await queue.close();
    await stack.close();
  });

  const runRecords = (agentName: string) =>
    stack.runtime.db.selectFrom('executions').select(['id', 'convid', 'result_code', 'started_at', 'finished_at']).where('agent_name', '=', agentName).execute();
  const recordOf = (id: string) => stack.runtime.db.selectFrom('executions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const activeChildrenOf = async (parentRunId: string) => (await queue.getJobs(['active'])).filter((job) => job.data?.parent?.runId === parentRunId);

  it('runs three children in parallel, each a run of its own, and hands their results to the parent', async () => {
    const res = await execAgent(stack.url, key, { agentName: names.fanOut });
    assert.equal(res.body.resultCode, 'success', JSON.stringify(res.body));
    assert.equal(res.body.output[0].text, 'success:slept 400, success:slept 300, success:slept 200');
    const childIds = (await agentVarsOf(res.body.convid, names.fanOut)).children;
    assert.equal(new Set(childIds).size, 3);
    const children = await Promise.all(childIds.map((id: string) => recordOf(id)));
    // They ran at once: every child started before any of them finished.
    const lastStart = Math.max(...children.map((c) => c.started_at.getTime()));
    const firstEnd = Math.min(...children.map((c) => c.finished_at.getTime()));
    assert.ok(lastStart < firstEnd, `the children's run windows overlap (last start ${lastStart}, first end ${firstEnd})`);
    // Each is a run like any other: the caller's, in a conversation of its own, visible through the API.
    assert.equal(new Set(children.map((c) => c.convid)).size, 3);
    const parent = await stack.runtime.db.selectFrom('executions').select('principal_id').where('convid', '=', res.body.convid).executeTakeFirstOrThrow();
    for (const child of children) {
      assert.equal(child.principal_id, parent.principal_id);
      const run = await post(stack.url, '/api/exec/getRun', { runId: child.id }, { key });
      assert.equal(run.status, 200, JSON.stringify(run.body));
      assert.equal(run.body.agentName, names.sleeper);
      const childConv = await post(stack.url, '/api/conv/get', { convid: child.convid }, { key });
      assert.equal(childConv.status, 200);
    }
  });

  it("names a child's parent in getRun and in the admin run detail, while it runs and once it ended", async () => {
    const admin = (await createAccount(stack.runtime.db, 'admin')).key;
    const getRun = (runId: string) => post(stack.url, '/api/exec/getRun', { runId }, { key });
    const adminGetRun = (runId: string) => post(stack.url, '/api/admin/getRun', { runId }, { key: admin });
    // A short child, run in its parent's worker.
    const res = await execAgent(stack.url, key, { agentName: names.caller, inputs: { agentName: names.echo, inputs: { query: 'q' } } });
    assert.equal(res.body.resultCode, 'success', JSON.stringify(res.body));
    const child = JSON.parse(res.body.output[0].text);
    assert.equal(child.resultCode, 'success', JSON.stringify(child));
    const parentId = (await stack.runtime.db.selectFrom('executions').select('id').where('convid', '=', res.body.convid).executeTakeFirstOrThrow()).id;
    const ended = await getRun(child.runId);
    assert.equal(ended.status, 200, JSON.stringify(ended.body));
    assert.equal(ended.body.parentRunId, parentId);
    assert.equal((await getRun(parentId)).body.parentRunId, undefined, 'a run no agent called has no parent');
    assert.equal((await adminGetRun(child.runId)).body.parentRunId, parentId);
    assert.equal((await adminGetRun(parentId)).body.parentRunId, null);

    // A child still running, queued by its parent.
    const submitted = await post(stack.url, '/api/exec/submit', { agentName: names.caller, inputs: { agentName: names.sleeper, inputs: { ms: 1500 } } }, { key });
    assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
    const parentRunId: string = submitted.body.runId;
    let childId = '';
    await waitFor(async () => (childId = (await activeChildrenOf(parentRunId))[0]?.data.runId ?? '') !== '', 15_000, 'the child to run');
    const running = await getRun(childId);
    assert.equal(running.body.status, 'running', JSON.stringify(running.body));
    assert.equal(running.body.parentRunId, parentRunId);
    const runningDetail = await adminGetRun(childId);
    assert.equal(runningDetail.body.parentRunId, parentRunId, JSON.stringify(runningDetail.body));
    const parentEnd = await post(stack.url, '/api/exec/wait', { runId: parentRunId }, { key });
    assert.equal(parentEnd.body.status, 'ended', JSON.stringify(parentEnd.body));
    const childEnded = await getRun(childId);
    assert.equal(childEnded.body.status, 'ended');
    assert.equal(childEnded.body.parentRunId, parentRunId);
  });

  it("runs a short child in its parent's worker, with no job, and a child that waits through the queue", async () => {
    // The queue's event stream: every job added is there.
    const queuedIds = async () => {
      const redis = new Redis(testEnv.REDIS_URL!);
      try {
        const entries = await redis.xrange(queue.keys.events!, '-', '+');
        return new Set(entries.filter(([, fields]) => fields[1] === 'added').map(([, fields]) => fields[fields.indexOf('jobId') + 1]));
      } finally {
        redis.disconnect();
      }
    };
    const callChild = async (agentName: string, inputs: object) => {
      const res = await execAgent(stack.url, key, { agentName: names.caller, inputs: { agentName, inputs } });
      assert.equal(res.body.resultCode, 'success', JSON.stringify(res.body));
      return JSON.parse(res.body.output[0].text);
    };
    const short = await callChild(names.echo, { query: 'here' });
    assert.equal(short.resultCode, 'success', JSON.stringify(short));
    assert.equal(short.output[0].text, 'echo here #1');
    const waits = await callChild(names.sleeper, { ms: 10 });
    assert.equal(waits.resultCode, 'success', JSON.stringify(waits));
    const queued = await queuedIds();
    assert.ok(queued.has(waits.runId), 'the child that waits was queued');
    assert.ok(!queued.has(short.runId), 'the short child was not');
    // Each a run like any other, with its record and its conversation.
    assert.equal((await recordOf(short.runId)).result_code, 'success');
    assert.equal((await post(stack.url, '/api/conv/get', { convid: short.convid }, { key })).status, 200);
  });

  it('resumes a parent that asked after its children without running them again', async () => {
    const asked = await execAgent(stack.url, key, { agentName: names.asksAfter });
    assert.equal(asked.body.resultCode, 'ask', JSON.stringify(asked.body));
    const before = (await runRecords(names.echo)).length;
    const done = await execAgent(stack.url, key, { agentName: names.asksAfter, convid: asked.body.convid, inputs: { go: 'yes' } });
    assert.equal(done.body.resultCode, 'success', JSON.stringify(done.body));
    assert.equal(done.body.output[0].text, 'echo a #1, echo b #1 then yes');
    assert.equal((await runRecords(names.echo)).length, before, 'no child ran again');
  });

  it('has a parent resumed before its child ended wait for that same child', async () => {
    const before = (await runRecords(names.sleeper)).length;
    const asked = await execAgent(stack.url, key, { agentName: names.asksWhile });
    assert.equal(asked.body.resultCode, 'ask', JSON.stringify(asked.body));
    const done = await execAgent(stack.url, key, { agentName: names.asksWhile, convid: asked.body.convid, inputs: { go: 'now' } });
    assert.equal(done.body.resultCode, 'success', JSON.stringify(done.body));
    const [code, childId, go] = done.body.output[0].text.split(' ');
    assert.equal(code, 'success');
    assert.equal(go, 'now');
    const sleepers = await runRecords(names.sleeper);
    assert.equal(sleepers.length, before + 1, 'one child, started once');
    assert.ok(sleepers.some((r) => r.id === childId));
  });

  it('stops the running children when the parent is cancelled', async () => {
    const requestId = `calls-${randomUUID()}`;
    const call = post(stack.url, '/api/exec/execAgent', { agentName: names.waiter }, { key, headers: { 'X-Request-Id': requestId } });
    let parentRunId = '';
    await waitFor(
      async () => {
        const parent = (await queue.getJobs(['active'])).find((job) => job.data?.requestId === requestId && !job.data.parent);
        parentRunId = parent?.data.runId ?? '';
        return parentRunId !== '' && (await activeChildrenOf(parentRunId)).length === 2;
      },
      15_000,
      'the parent and its two children to run',
    );
    const childIds = (await activeChildrenOf(parentRunId)).map((job) => job.data.runId);
    const cancel = await post(stack.url, '/api/exec/cancel', { requestId }, { key });
    assert.equal(cancel.body.cancelled, true);
    const answer = await call;
    assert.equal(answer.body.resultCode, 'stopped');
    await waitFor(async () => (await Promise.all(childIds.map((id) => findRecord(id)))).every(Boolean), 10_000, 'the children to end');
    for (const id of childIds) assert.equal((await recordOf(id)).result_code, 'stopped');
  });

  it('hands a child that ended on an ask to the parent, which answers it in the child conversation', async () => {
    const res = await execAgent(stack.url, key, { agentName: names.answers });
    assert.equal(res.body.resultCode, 'success', JSON.stringify(res.body));
    const { first, second } = JSON.parse(res.body.output[0].text);
    assert.equal(first.resultCode, 'ask');
    assert.equal(first.askInput.message, 'Who?');
    assert.equal(first.askInput.inputs[0].name, 'name');
    assert.match(first.convid, /^[0-9a-f-]{36}$/);
    assert.equal(second.resultCode, 'success');
    assert.equal(second.convid, first.convid);
    assert.equal(second.output[0].text, 'Hello Ada');
  });

  it("lets the parent ask its own caller a child's ask, then answer the child with the answers", async () => {
    const relay = uniqueAgentName('relay');
    await publishAgent(
      stack.runtime.db,
      relay,
      `export default async (sys) => {
        const first = await sys.call(${JSON.stringify(names.greeter)});
        const answers = await sys.ask(first.askInput);
        const second = await sys.call(${JSON.stringify(names.greeter)}, answers, { convid: first.convid });
        sys.say(second.output[0].text);
      }`,
    );
    const asked = await execAgent(stack.url, key, { agentName: relay });
    assert.equal(asked.body.resultCode, 'ask', JSON.stringify(asked.body));
    assert.equal(asked.body.askInput.message, 'Who?');
    const greeters = (await runRecords(names.greeter)).length;
    const done = await execAgent(stack.url, key, { agentName: relay, convid: asked.body.convid, inputs: { name: 'Grace' } });
    assert.equal(done.body.resultCode, 'success', JSON.stringify(done.body));
    assert.equal(done.body.output[0].text, 'Hello Grace');
    assert.equal((await runRecords(names.greeter)).length, greeters + 1, 'the first child was not run again; the answer is one more run');
  });

  it('ends a run that calls at depth 9 errorInAgent; 8 levels below the caller run', async () => {
    const res = await execAgent(stack.url, key, { agentName: names.nest });
    assert.equal(res.body.resultCode, 'success', JSON.stringify(res.body));
    const deepest = JSON.parse(res.body.output[0].text);
    assert.equal(deepest.depth, 7, 'the run at depth 7 saw its child fail');
    assert.equal(deepest.child, 'errorInAgent');
    assert.match(deepest.message, /nest at most 8 deep/);
    // Nine runs: the caller's (depth 0) and eight below it, the deepest ended errorInAgent by its call.
    const nested = await runRecords(names.nest);
    assert.equal(nested.length, 9);
    assert.deepEqual(nested.map((r) => r.result_code).sort(), [...Array(8).fill('success'), 'errorInAgent'].sort());
  });

  it('answers agentNotFound for an agent that does not exist, without a run', async () => {
    const res = await execAgent(stack.url, key, { agentName: names.caller, inputs: { agentName: uniqueAgentName('nobody'), inputs: {} } });
    assert.equal(res.body.resultCode, 'success', JSON.stringify(res.body));
    const result = JSON.parse(res.body.output[0].text);
    assert.equal(result.resultCode, 'agentNotFound');
    assert.equal(result.runId, null);
  });

  it("counts children against the caller's limits: a child past runsInFlight is answered rateLimited, nothing queued", async () => {
    const limited = await createAccount(stack.runtime.db);
    await upsertCallerLimits(stack.runtime.db, { kind: 'serviceAccount', id: limited.id }, { runs_in_flight: 1 });
    const before = (await runRecords(names.echo)).length;
    const res = await execAgent(stack.url, limited.key, { agentName: names.caller, inputs: { agentName: names.echo, inputs: { query: 'x' } } });
    assert.equal(res.body.resultCode, 'success', JSON.stringify(res.body));
    const result = JSON.parse(res.body.output[0].text);
    assert.equal(result.resultCode, 'rateLimited', JSON.stringify(result));
    assert.equal(result.runId, null);
    assert.equal((await runRecords(names.echo)).length, before);
  });

  it("answers unknownConversation for a convid that is not the caller's, changing nothing", async () => {
    const other = (await createAccount(stack.runtime.db)).key;
    const theirs = await execAgent(stack.url, other, { agentName: names.echo, inputs: { query: 'mine' } });
    for (const convid of [theirs.body.convid, 'not-a-conversation']) {
      const res = await execAgent(stack.url, key, { agentName: names.caller, inputs: { agentName: names.echo, inputs: { query: 'x' }, convid } });
      const result = JSON.parse(res.body.output[0].text);
      assert.equal(result.resultCode, 'unknownConversation', JSON.stringify(result));
    }
    const again = await execAgent(stack.url, other, { agentName: names.echo, convid: theirs.body.convid, inputs: { query: 'mine' } });
    assert.equal(again.body.output[0].text, 'echo mine #2', 'their conversation was not touched');
  });

  it('stops the running children when the parent times out', async () => {
    const parent = uniqueAgentName('slowparent');
    // The child starts 2 s after its parent, so its own max runtime (the same) would end it 2 s after the parent's: its end is the parent's stop.
    await publishAgent(stack.runtime.db, parent, `export default async (sys) => { await sys.sleep(2000); await sys.call(${JSON.stringify(names.sleeper)}, { ms: 60000 }); }`);
    const requestId = `calls-${randomUUID()}`;
    const call = post(stack.url, '/api/exec/execAgent', { agentName: parent }, { key, headers: { 'X-Request-Id': requestId } });
    let childId = '';
    await waitFor(
      async () => {
        const parentJob = (await queue.getJobs(['active'])).find((job) => job.data?.requestId === requestId && !job.data.parent);
        childId = parentJob ? ((await activeChildrenOf(parentJob.data.runId))[0]?.data.runId ?? '') : '';
        return childId !== '';
      },
      15_000,
      'the parent and its child to run',
    );
    assert.equal((await call).body.resultCode, 'timedOut');
    await waitFor(async () => (await findRecord(childId)) !== undefined, 10_000, 'the child to end');
    assert.equal((await recordOf(childId)).result_code, 'stopped');
  });

  it('shows the child calls in a traced draft validation', async () => {
    const developer = (await createAccount(stack.runtime.db, 'developer')).key;
    const source = `export default async (sys) => { const r = await sys.call(${JSON.stringify(names.echo)}, { query: 'traced' }); sys.say(r.output[0].text); }`;
    const saved = await post(stack.url, '/api/dev/saveDraft', { agentName: uniqueAgentName('draftcaller'), source, validationQuery: 'q' }, { key: developer });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    const res = await post(stack.url, '/api/dev/validateDraftStream', { draftid: saved.body.draftid }, { key: developer });
    assert.equal(res.body.resultCode, 'success', JSON.stringify(res.body));
    const call = res.body.trace.find((e: { kind: string; name?: string }) => e.kind === 'call' && e.name === 'call');
    assert.deepEqual(call.args, { agentName: names.echo, inputs: { query: 'traced' }, convid: null });
    const result = res.body.trace.find((e: { kind: string; call?: number }) => e.kind === 'result' && e.call === call.seq);
    assert.equal(result.value.resultCode, 'success');
    assert.equal(result.value.output[0].text, 'echo traced #1');
    assert.equal(call.line, 1);
  });

  it('answers conversationBusy for a call in the conversation the caller runs in, at once', async () => {
    const selfCaller = uniqueAgentName('selfcaller');
    await publishAgent(stack.runtime.db, selfCaller, `export default async (sys) => { const r = await sys.call(${JSON.stringify(names.echo)}, { query: 'me' }, { convid: sys.convid }); sys.say(r.resultCode); }`);
    const res = await execAgent(stack.url, key, { agentName: selfCaller });
    assert.equal(res.body.resultCode, 'success', JSON.stringify(res.body));
    assert.equal(res.body.output[0].text, 'conversationBusy');
  });

  it('throws a TypeError in the agent for inputs that are not JSON', async () => {
    const res = await execAgent(stack.url, key, { agentName: names.caller, inputs: { agentName: names.echo, circular: true } });
    assert.equal(res.body.output[0].text, 'threw TypeError');
  });

  async function findRecord(id: string) {
    return stack.runtime.db.selectFrom('executions').select('id').where('id', '=', id).executeTakeFirst();
  }

  async function agentVarsOf(convid: string, agentName: string) {
    const row = await stack.runtime.db.selectFrom('conversations').select('agent_vars').where('id', '=', convid).executeTakeFirstOrThrow();
    return (row.agent_vars as Record<string, { children: string[] }>)[agentName]!;
  }
});
