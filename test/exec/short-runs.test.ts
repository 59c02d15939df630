import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { findConversation } from '../../db/conversations.repository.js';
import { post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { waitFor } from '../helpers/wait.js';

/** execAgent with a request id of our own, so the run's log line can be found. */
function call(stack: Stack, key: string, requestId: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return post(stack.url, '/api/exec/execAgent', body, { key, headers: { 'X-Request-Id': requestId, ...headers } });
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
    // However late this process's event loop runs meanwhile (it holds the client, the worker and the tests).
    stack = await startStack({}, { inline: { maxLateMs: Number.POSITIVE_INFINITY } });
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

  it('answers a short run of a new conversation in the web process and keeps it as a worker would', async () => {
    const id = requestId('counter');
    const first = await call(stack, key, id, { agentName: agents.counter, inputs: { query: 'Ada' } });
    assert.equal(first.status, 200);
    assert.equal(first.body.resultCode, 'success');
    assert.deepEqual(first.body.output, [{ type: 'text', text: 'call 1 of Ada' }]);
    assert.equal(endedIn(stack, id), 'web');
    const kept = await findConversation(stack.runtime.db, first.body.convid);
    assert.deepEqual(kept?.agent_vars[agents.counter!], { count: 1 });
    // The conversation goes on through the queue (an existing one), from what the web process kept.
    const next = requestId('counter');
    const second = await call(stack, key, next, { agentName: agents.counter, convid: first.body.convid, inputs: { query: 'Ada' } });
    assert.deepEqual(second.body.output, [{ type: 'text', text: 'call 2 of Ada' }]);
    assert.equal(endedIn(stack, next), 'worker');
  });

  it('answers a call with an Idempotency-Key here too; its retries, at once or later, get that answer and run nothing', async () => {
    const headers = { 'Idempotency-Key': `short-key-${process.pid}-${(counter += 1)}` };
    const [id, concurrentId] = [requestId('counter'), requestId('counter')];
    const [first, concurrent] = await Promise.all([
      call(stack, key, id, { agentName: agents.counter, inputs: { query: 'Kay' } }, headers),
      call(stack, key, concurrentId, { agentName: agents.counter, inputs: { query: 'Kay' } }, headers),
    ]);
    const later = await call(stack, key, requestId('counter'), { agentName: agents.counter, inputs: { query: 'Kay' } }, headers);
    assert.equal(first.body.resultCode, 'success');
    assert.deepEqual(first.body.output, [{ type: 'text', text: 'call 1 of Kay' }]);
    assert.deepEqual(concurrent.body, first.body);
    assert.deepEqual(later.body, first.body);
    const ids = [id, concurrentId];
    assert.ok(ids.some((one) => endedIn(stack, one) === 'web'), 'the run was answered by the web process');
    const runs = await stack.runtime.db.selectFrom('executions').select('id').where('convid', '=', first.body.convid).execute();
    assert.equal(runs.length, 1, 'one run');
  });

  it('queues a keyed call the web process declines under the ids it claimed: a retry joins it, one request upstream', async () => {
    const before = requests;
    const headers = { 'Idempotency-Key': `declined-key-${process.pid}-${(counter += 1)}` };
    const ids = [requestId('fetcher'), requestId('fetcher')];
    const [first, retry] = await Promise.all(ids.map((id) => call(stack, key, id, { agentName: agents.fetcher, inputs: {} }, headers)));
    assert.equal(first!.body.resultCode, 'success');
    assert.deepEqual(retry!.body, first!.body);
    assert.equal(requests, before + 1);
    assert.deepEqual(ids.map((id) => endedIn(stack, id)).filter(Boolean), ['worker'], 'one run, ended in a worker');
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

  it('tries one call of an agent not known short at a time, the others queued at once, and every call once one was answered here', async () => {
    const agentName = uniqueAgentName('burst');
    await publishAgent(stack.runtime.db, agentName, `export default async function (sys) { sys.say('hi ' + sys.query); }`);
    const burst = async () => {
      const ids = Array.from({ length: 8 }, () => requestId('burst'));
      const answers = await Promise.all(ids.map((id) => call(stack, key, id, { agentName, inputs: { query: 'Cy' } })));
      assert.ok(answers.every((answer) => answer.body.resultCode === 'success'));
      await waitFor(() => ids.every((id) => endedIn(stack, id) !== undefined), 5000, 'every run of the burst logged');
      return ids.filter((id) => endedIn(stack, id) === 'web').length;
    };
    assert.ok((await burst()) <= 1, 'a new agent: one probe, the rest through the queue');
    await waitFor(async () => {
      const id = requestId('burst');
      assert.equal((await call(stack, key, id, { agentName, inputs: { query: 'Cy' } })).body.resultCode, 'success');
      await waitFor(() => endedIn(stack, id) !== undefined, 5000, 'the run logged');
      return endedIn(stack, id) === 'web';
    }, 10_000, 'a run of the agent answered here');
    assert.ok((await burst()) > 1, 'known short: more than one call of a burst answered here');
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
