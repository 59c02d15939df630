import assert from 'node:assert/strict';
import { execAgent } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

/**
 * DESIGN §12's new rows through the HTTP API, each with the agent code it was found with: memory that
 * grows outside the heap, a run's CPU time, and runs that can never finish. Every run here would have
 * ended `success` holding gigabytes, or only at the 30 s max runtime; each message says which limit
 * ended it, so no assertion needs a clock.
 */
describe('runaway runs through the API', function () {
  this.timeout(60_000);
  let stack: Stack;
  let key: string;

  before(async () => {
    // Enough CPU time for the deepest sys.vars to be built and measured on a loaded machine.
    stack = await startStack({ MAX_AGENT_RUNTIME_MS: '30000', AGENT_CPU_MS: '4000' });
    key = (await createAccount(stack.runtime.db, 'user')).key;
  });

  after(async () => {
    await stack.close();
  });

  async function run(body: string, callerKey = key) {
    const agentName = uniqueAgentName('runaway');
    await publishAgent(stack.runtime.db, agentName, `export default async function (sys) { ${body} }`);
    const res = await execAgent(stack.url, callerKey, { agentName, inputs: {} });
    assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 500));
    return res.body;
  }

  /** The process took less than `mb` more than before `action` (the attacks below would take 1–2 GiB). */
  async function grewLessThan<T>(mb: number, action: () => Promise<T>): Promise<T> {
    const before = process.memoryUsage.rss();
    const result = await action();
    const grown = (process.memoryUsage.rss() - before) / 1048576;
    assert.ok(grown < mb, `the process grew by ${grown.toFixed(0)} MB`);
    return result;
  }

  describe('memory outside the heap', () => {
    it('has no resizable ArrayBuffer: the 2 GiB resize ends errorInAgent and the process does not grow', async () => {
      const body = await grewLessThan(256, () =>
        run(`const b = new ArrayBuffer(1, {maxByteLength: 2 ** 31}); b.resize(2 ** 31); new Uint8Array(b).fill(7); sys.say('held ' + b.byteLength);`),
      );
      assert.equal(body.resultCode, 'errorInAgent');
      assert.match(body.error.message, /TypeError: b\.resize is not a function/);
      assert.deepEqual(body.output, []);
    });

    it('has no growable SharedArrayBuffer: grow() ends errorInAgent and the process does not grow', async () => {
      const body = await grewLessThan(256, () =>
        run(`const b = new SharedArrayBuffer(1, {maxByteLength: 2 ** 31}); b.grow(2 ** 31); new Uint8Array(b).fill(7); sys.say('held ' + b.byteLength);`),
      );
      assert.equal(body.resultCode, 'errorInAgent');
      assert.match(body.error.message, /TypeError: b\.grow is not a function/);
    });

    it('counts a plain buffer past the limit: RangeError, catchable, and nothing held', async () => {
      const body = await grewLessThan(256, () => run(`try { new ArrayBuffer(2 ** 31); sys.say('held'); } catch (err) { sys.say(String(err)); }`));
      assert.equal(body.resultCode, 'success');
      assert.match(JSON.stringify(body.output), /RangeError/);
    });
  });

  describe('CPU time', () => {
    it('ends a busy loop timedOut naming AGENT_CPU_MS, long before the max runtime', async () => {
      const body = await run(`while (true) {}`);
      assert.equal(body.resultCode, 'timedOut');
      assert.match(body.error.message, /more than 4000 ms of CPU time \(AGENT_CPU_MS\)/);
    });

    it('counts a loop after a host call too (a run that waited, then computes)', async () => {
      const body = await run(`await sys.sleep(10); sys.say('before'); for (;;) {}`);
      assert.equal(body.resultCode, 'timedOut');
      assert.match(body.error.message, /AGENT_CPU_MS/);
      assert.deepEqual(body.output, [{ type: 'text', text: 'before' }]);
    });

    it('does not count time spent waiting on the host: a run that sleeps past its CPU time succeeds', async () => {
      const body = await run(`await sys.sleep(4500); sys.say('slept');`);
      assert.equal(body.resultCode, 'success', JSON.stringify(body));
    });
  });

  describe('runs that can never finish', () => {
    // A Map growing past the heap is the same, through isolated-vm's out-of-memory handler; that parks a
    // thread for good and the process can then only end killed, so it is tried on a product process of
    // its own (hostile-agents.test.ts), never in this one.
    it('ends a run filling its heap with small objects errorInAgent (memory), and the process stays up', async () => {
      const body = await run(`const kept = []; for (let i = 0; ; i++) kept.push({ i });`);
      assert.equal(body.resultCode, 'errorInAgent');
      assert.match(body.error.message, /memory limit exceeded/);
      assert.equal((await run(`sys.say('still here')`)).resultCode, 'success');
    });

    it('ends a run whose agent returned leaving a loop of promise callbacks timedOut, saying so', async () => {
      const body = await run(`sys.say('returning'); (function loop() { Promise.resolve().then(loop); })();`);
      assert.equal(body.resultCode, 'timedOut');
      assert.match(body.error.message, /returned, but code it left running/);
    });

    it('refuses sys.vars nested 100,000 deep with the nesting message, not a stack overflow', async () => {
      const body = await run(`let v = {}; const top = v; for (let i = 0; i < 100000; i++) v = v.a = {}; sys.vars.deep = top;`);
      assert.equal(body.resultCode, 'errorInAgent', JSON.stringify(body));
      assert.match(body.error.message, /^sys\.vars is nested deeper than 64 levels \(at sys\.vars\.deep\.a\.a…\)/);
    });

    it('refuses sys.vars nested 65 deep with the same message', async () => {
      const body = await run(`let v = {}; const top = v; for (let i = 0; i < 64; i++) v = v.a = {}; sys.vars.deep = top;`);
      assert.equal(body.resultCode, 'errorInAgent');
      assert.match(body.error.message, /^sys\.vars is nested deeper than 64 levels \(at sys\.vars\.deep\.a\.a…\)/);
    });
  });

  it("leaves another caller's run unharmed by all of the above", async () => {
    const other = (await createAccount(stack.runtime.db, 'user')).key;
    const body = await run(`sys.say('hello')`, other);
    assert.equal(body.resultCode, 'success');
    assert.deepEqual(body.output, [{ type: 'text', text: 'hello' }]);
  });
});
