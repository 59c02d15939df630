import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { findConversation } from '../../db/conversations.repository.js';
import { post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { waitFor } from '../helpers/wait.js';

/** execAgent with a request id of our own, so the run's log line can be found. */
function call(stack: Stack, key: string, requestId: string, body: Record<string, unknown>) {
  return post(stack.url, '/api/exec/execAgent', body, { key, headers: { 'X-Request-Id': requestId } });
}

/** Where the run of `requestId` ended: 'web' (answered where the call arrived) or 'worker'. */
function endedIn(stack: Stack, requestId: string): 'web' | 'worker' | undefined {
  for (const line of stack.logLines) {
    const entry = JSON.parse(line) as { msg?: string; requestId?: string; inline?: boolean };
    if (entry.msg === 'run ended' && entry.requestId === requestId) return entry.inline ? 'web' : 'worker';
  }
  return undefined;
}

let counter = 0;
const requestId = (what: string) => `short-${what}-${process.pid}-${(counter += 1)}`;

describe('short runs: answered by the web process that took the call', () => {
  let stack: Stack;
  let key: string;
  let upstream: Server;
  let upstreamUrl: string;
  let requests = 0;
  const agents: Record<string, string> = {};

  before(async () => {
    upstream = createServer((_req, res) => {
      requests += 1;
      res.end(`answer ${requests}`);
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/`;
    // However late this process's event loop runs meanwhile (it holds the client, the worker and the
    // tests); a worker with room for a call beside eight held ones.
    stack = await startStack({ WORKER_CONCURRENCY: '16' }, { inline: { maxLateMs: Number.POSITIVE_INFINITY } });
    key = (await createAccount(stack.runtime.db)).key;
    const sources: Record<string, string> = {
      counter: `export default async function (sys) {
        sys.vars.count = (sys.vars.count ?? 0) + 1;
        sys.say('call ' + sys.vars.count + ' of ' + sys.query);
      }`,
      fetcher: `export default async function (sys) {
        sys.vars.before = true;
        const res = await sys.fetch(${JSON.stringify(upstreamUrl)});
        sys.say(res.text);
      }`,
      stepper: `export default async function (sys) {
        sys.vars.step = (sys.vars.step ?? 0) + 1;
        if (sys.vars.step === 1) return sys.say('step 1');
        const res = await sys.fetch(${JSON.stringify(upstreamUrl)});
        sys.say(res.text + ' at step ' + sys.vars.step);
      }`,
      asker: `export default async function (sys) {
        const answers = await sys.ask({ message: 'name?', inputs: [{ name: 'name', type: 'str' }] });
        sys.vars.name = answers.name;
        sys.say('hi ' + answers.name);
      }`,
      computer: `export default async function (sys) {
        let sum = 0;
        for (let i = 0; i < 100_000_000; i++) sum += i % 7;
        sys.vars.spun = sum > 0;
        sys.say('computed');
      }`,
    };
    for (const [base, source] of Object.entries(sources)) {
      agents[base] = uniqueAgentName(base);
      await publishAgent(stack.runtime.db, agents[base]!, source);
    }
  });
  after(async () => {
    await stack.close();
    upstream.close();
  });

  it('answers short runs of a new conversation and of its next calls in the web process, keeping each as a worker would', async () => {
    const id = requestId('counter');
    const first = await call(stack, key, id, { agentName: agents.counter, inputs: { query: 'Ada' } });
    assert.equal(first.status, 200);
    assert.equal(first.body.resultCode, 'success');
    assert.deepEqual(first.body.output, [{ type: 'text', text: 'call 1 of Ada' }]);
    assert.equal(endedIn(stack, id), 'web');
    const kept = await findConversation(stack.runtime.db, first.body.convid);
    assert.deepEqual(kept?.agent_vars[agents.counter!], { count: 1 });
    // The conversation goes on here too, each call from what the one before kept.
    for (const n of [2, 3]) {
      const next = requestId('counter');
      const res = await call(stack, key, next, { agentName: agents.counter, convid: first.body.convid, inputs: { query: 'Ada' } });
      assert.equal(res.body.convid, first.body.convid);
      assert.deepEqual(res.body.output, [{ type: 'text', text: `call ${n} of Ada` }]);
      assert.equal(endedIn(stack, next), 'web');
    }
    const after = await findConversation(stack.runtime.db, first.body.convid);
    assert.deepEqual(after?.agent_vars[agents.counter!], { count: 3 });
    assert.equal(after?.history.length, 3);
  });

  it('keeps the order of concurrent calls on one conversation, whether answered here or queued behind one', async () => {
    const first = await call(stack, key, requestId('counter'), { agentName: agents.counter, inputs: { query: 'Cy' } });
    const ids = Array.from({ length: 8 }, () => requestId('counter'));
    const results = await Promise.all(ids.map((id) => call(stack, key, id, { agentName: agents.counter, convid: first.body.convid, inputs: { query: 'Cy' } })));
    const counts = results.map((res) => Number(/call (\d+)/.exec(res.body.output[0].text)?.[1])).sort((a, b) => a - b);
    assert.deepEqual(counts, [2, 3, 4, 5, 6, 7, 8, 9]);
    const kept = await findConversation(stack.runtime.db, first.body.convid);
    assert.deepEqual(kept?.agent_vars[agents.counter!], { count: 9 });
    assert.ok(ids.some((id) => endedIn(stack, id) === 'worker'), 'calls that found one running were queued');
  });

  it('sends a next call whose run waits on an async call to a worker, turn and all: one request upstream, the state kept', async () => {
    const first = await call(stack, key, requestId('stepper'), { agentName: agents.stepper, inputs: {} });
    assert.deepEqual(first.body.output, [{ type: 'text', text: 'step 1' }]);
    const before = requests;
    const id = requestId('stepper');
    const res = await call(stack, key, id, { agentName: agents.stepper, convid: first.body.convid, inputs: {} });
    assert.equal(res.body.resultCode, 'success');
    assert.deepEqual(res.body.output, [{ type: 'text', text: `answer ${before + 1} at step 2` }]);
    assert.equal(requests, before + 1);
    assert.equal(endedIn(stack, id), 'worker');
    const kept = await findConversation(stack.runtime.db, first.body.convid);
    assert.deepEqual(kept?.agent_vars[agents.stepper!], { step: 2 });
    // The turn went with the call and was left by the worker: the next call is not kept waiting.
    const third = await call(stack, key, requestId('stepper'), { agentName: agents.stepper, convid: first.body.convid, inputs: {} });
    assert.deepEqual(third.body.output, [{ type: 'text', text: `answer ${before + 2} at step 3` }]);
  });

  it('sends the answers to an ask to a worker, which resumes the paused run', async () => {
    const asked = await call(stack, key, requestId('asker'), { agentName: agents.asker, inputs: {} });
    assert.equal(asked.body.resultCode, 'ask');
    const id = requestId('asker');
    const res = await call(stack, key, id, { agentName: agents.asker, convid: asked.body.convid, inputs: { name: 'Ada' } });
    assert.equal(res.body.resultCode, 'success');
    assert.deepEqual(res.body.output, [{ type: 'text', text: 'hi Ada' }]);
    assert.equal(endedIn(stack, id), 'worker');
    const kept = await findConversation(stack.runtime.db, asked.body.convid);
    assert.deepEqual(kept?.agent_vars[agents.asker!], { name: 'Ada' });
  });

  it("answers unknownConversation to a call on another caller's conversation and leaves it as it was", async () => {
    const first = await call(stack, key, requestId('counter'), { agentName: agents.counter, inputs: { query: 'Di' } });
    const other = (await createAccount(stack.runtime.db)).key;
    const res = await call(stack, other, requestId('counter'), { agentName: agents.counter, convid: first.body.convid, inputs: { query: 'Di' } });
    assert.equal(res.body.resultCode, 'unknownConversation');
    const kept = await findConversation(stack.runtime.db, first.body.convid);
    assert.deepEqual(kept?.agent_vars[agents.counter!], { count: 1 });
    const mine = await call(stack, key, requestId('counter'), { agentName: agents.counter, convid: first.body.convid, inputs: { query: 'Di' } });
    assert.deepEqual(mine.body.output, [{ type: 'text', text: 'call 2 of Di' }]);
  });

  it('queues calls on existing conversations too while this process waits on many queued calls, and answers them again after', async () => {
    // Eight calls held by their agent's fetch, which this gate answers only once told to.
    const held: Array<() => void> = [];
    const gate = createServer((_req, res) => void held.push(() => res.end('let go')));
    await new Promise<void>((resolve) => gate.listen(0, '127.0.0.1', resolve));
    const gateUrl = `http://127.0.0.1:${(gate.address() as AddressInfo).port}/`;
    const waiter = uniqueAgentName('waiter');
    await publishAgent(stack.runtime.db, waiter, `export default async (sys) => { sys.say((await sys.fetch(${JSON.stringify(gateUrl)})).text); }`);
    try {
      const first = await call(stack, key, requestId('counter'), { agentName: agents.counter, inputs: { query: 'Ed' } });
      const waiting = Array.from({ length: 8 }, () => call(stack, key, requestId('waiter'), { agentName: waiter, inputs: {} }));
      await waitFor(async () => held.length === 8, 10_000, 'eight calls waiting on the gate');
      const busy = requestId('counter');
      const queued = await call(stack, key, busy, { agentName: agents.counter, convid: first.body.convid, inputs: { query: 'Ed' } });
      assert.deepEqual(queued.body.output, [{ type: 'text', text: 'call 2 of Ed' }]);
      assert.equal(endedIn(stack, busy), 'worker');
      for (const release of held) release();
      for (const res of await Promise.all(waiting)) assert.deepEqual(res.body.output, [{ type: 'text', text: 'let go' }]);
      const calm = requestId('counter');
      const answered = await call(stack, key, calm, { agentName: agents.counter, convid: first.body.convid, inputs: { query: 'Ed' } });
      assert.deepEqual(answered.body.output, [{ type: 'text', text: 'call 3 of Ed' }]);
      assert.equal(endedIn(stack, calm), 'web');
    } finally {
      for (const release of held) release();
      gate.close();
    }
  });

  it('sends a run that waits on an async call to a worker before the call acts: one request upstream, not two', async () => {
    const before = requests;
    const id = requestId('fetcher');
    const res = await call(stack, key, id, { agentName: agents.fetcher, inputs: {} });
    assert.equal(res.body.resultCode, 'success');
    assert.deepEqual(res.body.output, [{ type: 'text', text: `answer ${before + 1}` }]);
    assert.equal(requests, before + 1);
    assert.equal(endedIn(stack, id), 'worker');
    const kept = await findConversation(stack.runtime.db, res.body.convid);
    assert.deepEqual(kept?.agent_vars[agents.fetcher!], { before: true });
  });

  it('sends a run still computing when its synchronous entry ends to a worker, which runs it whole', async () => {
    const id = requestId('computer');
    const res = await call(stack, key, id, { agentName: agents.computer, inputs: {} });
    assert.equal(res.body.resultCode, 'success');
    assert.deepEqual(res.body.output, [{ type: 'text', text: 'computed' }]);
    assert.equal(endedIn(stack, id), 'worker');
    const kept = await findConversation(stack.runtime.db, res.body.convid);
    assert.deepEqual(kept?.agent_vars[agents.computer!], { spun: true });
  });

  it('takes no short run for a moment after one outlasted its entry, then takes them again', async () => {
    const computed = await call(stack, key, requestId('computer'), { agentName: agents.computer, inputs: {} });
    assert.equal(computed.body.resultCode, 'success');
    // Right after: the thread gives no run its synchronous entry (a burst of such agents added up).
    const right = requestId('counter');
    assert.equal((await call(stack, key, right, { agentName: agents.counter, inputs: { query: 'Bo' } })).body.resultCode, 'success');
    assert.equal(endedIn(stack, right), 'worker');
    const again = async () => {
      const id = requestId('counter');
      assert.equal((await call(stack, key, id, { agentName: agents.counter, inputs: { query: 'Bo' } })).body.resultCode, 'success');
      return endedIn(stack, id) === 'web';
    };
    await waitFor(again, 5000, 'a short run answered in the web process again');
  });

  it('sends an agent that waited straight to the queue afterwards', async () => {
    const before = requests;
    const id = requestId('fetcher');
    const res = await call(stack, key, id, { agentName: agents.fetcher, inputs: {} });
    assert.equal(res.body.resultCode, 'success');
    assert.equal(requests, before + 1);
    assert.equal(endedIn(stack, id), 'worker');
  });
});

describe('short runs with no worker running', () => {
  let stack: Stack;
  let key: string;
  let agentName: string;

  before(async () => {
    stack = await startStack({}, { inline: { maxLateMs: Number.POSITIVE_INFINITY } });
    key = (await createAccount(stack.runtime.db)).key;
    agentName = uniqueAgentName('greeter');
    await publishAgent(stack.runtime.db, agentName, `export default async function (sys) { sys.say('Hello, ' + sys.query); }`);
    await stack.worker.close();
  });
  after(async () => {
    await stack.web.close();
    await stack.runtime.db.destroy();
  });

  it('are answered all the same: nothing of them goes through the queue', async () => {
    const res = await call(stack, key, requestId('greeter'), { agentName, inputs: { query: 'Grace' } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.output, [{ type: 'text', text: 'Hello, Grace' }]);
    const next = await call(stack, key, requestId('greeter'), { agentName, convid: res.body.convid, inputs: { query: 'again' } });
    assert.equal(next.status, 200);
    assert.deepEqual(next.body.output, [{ type: 'text', text: 'Hello, again' }]);
  });
});

describe('short runs turned off (WEB_INLINE_RUNS=false)', () => {
  let stack: Stack;
  let key: string;
  let agentName: string;

  before(async () => {
    stack = await startStack({ WEB_INLINE_RUNS: 'false' });
    key = (await createAccount(stack.runtime.db)).key;
    agentName = uniqueAgentName('greeter');
    await publishAgent(stack.runtime.db, agentName, `export default async function (sys) { sys.say('Hello, ' + sys.query); }`);
  });
  after(() => stack.close());

  it('queue every call for a worker', async () => {
    const id = requestId('off');
    const res = await call(stack, key, id, { agentName, inputs: { query: 'Grace' } });
    assert.deepEqual(res.body.output, [{ type: 'text', text: 'Hello, Grace' }]);
    assert.equal(endedIn(stack, id), 'worker');
  });
});

describe('short runs while the web process falls behind', () => {
  let stack: Stack;
  let key: string;
  const agents: Record<string, string> = {};
  let hog: NodeJS.Timeout | undefined;

  before(async () => {
    // An entry costing over 0.5 ms of the isolate's CPU is costly here (2 ms by default), so that the
    // computer below is costly on any machine while staying far inside its 10 ms synchronous entry;
    // and a costly agent is not tried again while late within the test (once a second by default).
    stack = await startStack({}, { inline: { admission: { costlyEntryMs: 0.5, costlyRetryMs: 60_000 } } });
    key = (await createAccount(stack.runtime.db)).key;
    const sources: Record<string, string> = {
      greeter: `export default async (sys) => { sys.say('Hello, ' + sys.query); }`,
      computer: `export default async (sys) => {
        let sum = 0;
        for (let i = 0; i < 500_000; i++) sum += i % 7;
        sys.say('computed ' + sum);
      }`,
    };
    for (const [base, source] of Object.entries(sources)) {
      agents[base] = uniqueAgentName(base);
      await publishAgent(stack.runtime.db, agents[base]!, source);
    }
  });
  after(async () => {
    clearInterval(hog);
    await stack.close();
  });

  /** Calls `agent` and tells where its run ended. */
  async function endsIn(agent: string, what: string): Promise<'web' | 'worker' | undefined> {
    const id = requestId(what);
    const res = await call(stack, key, id, { agentName: agents[agent], inputs: { query: 'Ada' } });
    assert.equal(res.status, 200);
    assert.equal(res.body.resultCode, 'success');
    return endedIn(stack, id);
  }

  it('leaves a costly agent to the workers while its event loop runs late, keeps a cheap one, and takes both again once it catches up', async () => {
    // Measured on time first: eight entries into a warm context before its cost counts.
    for (let i = 0; i < 10; i++) await endsIn('computer', 'measured');
    // Something else holds the loop 20 ms at a time with 5 ms gaps: its timers run ~15 ms late.
    hog = setInterval(() => {
      const until = performance.now() + 20;
      while (performance.now() < until);
    }, 5);
    await waitFor(async () => (await endsIn('computer', 'late')) === 'worker', 10_000, 'the costly agent left to a worker');
    // Late all along, the cheap agent is still answered here: queueing it would cost this loop more.
    const cheap = [];
    for (let i = 0; i < 5; i++) cheap.push(await endsIn('greeter', 'late-cheap'));
    assert.deepEqual(cheap, ['web', 'web', 'web', 'web', 'web']);
    assert.equal(await endsIn('computer', 'still-late'), 'worker', 'the loop ran late throughout');
    clearInterval(hog);
    hog = undefined;
    await waitFor(async () => (await endsIn('computer', 'caught-up')) === 'web', 10_000, 'the costly agent answered by the web process again');
  });
});
