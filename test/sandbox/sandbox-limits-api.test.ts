import assert from 'node:assert/strict';
import { execAgent, post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

/**
 * DESIGN §12 through the HTTP API: each finding of the sandbox hardening issue, with the agent code
 * it was found with, and each limit of the table at its edge.
 */
describe('sandbox limits through the API', function () {
  this.timeout(60_000);
  let stack: Stack;
  let key: string;

  before(async () => {
    stack = await startStack({ MAX_AGENT_RUNTIME_MS: '15000' });
    key = (await createAccount(stack.runtime.db, 'user')).key;
  });

  after(async () => {
    await stack.close();
  });

  async function run(source: string, inputs: Record<string, unknown> = {}, callerKey = key) {
    const agentName = uniqueAgentName('limits');
    await publishAgent(stack.runtime.db, agentName, source);
    const res = await execAgent(stack.url, callerKey, { agentName, inputs });
    assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 500));
    return res.body;
  }

  describe('memory', () => {
    it('has no WebAssembly, whose memory V8 does not count: growing one to 512 MB ends errorInAgent and the worker does not grow', async () => {
      const rssBefore = process.memoryUsage().rss;
      const body = await run(`export default async function (sys) {
        const memory = new WebAssembly.Memory({ initial: 1, maximum: 65536 });
        memory.grow(8191);
        new Uint8Array(memory.buffer).fill(1);
        sys.say('grown to ' + memory.buffer.byteLength);
      }`);
      assert.equal(body.resultCode, 'errorInAgent');
      assert.match(body.error.message, /ReferenceError: WebAssembly is not defined/);
      assert.deepEqual(body.output, []);
      assert.ok(process.memoryUsage().rss - rssBefore < 128 * 1024 * 1024, 'the process did not take the 512 MB');
    });

    it('counts ArrayBuffer memory against AGENT_MEMORY_MB', async () => {
      const body = await run(`export default async function (sys) {
        const kept = [];
        for (let i = 0; i < 8; i++) kept.push(new Uint8Array(64 * 1024 * 1024).fill(1));
        sys.say('kept ' + kept.length);
      }`);
      assert.equal(body.resultCode, 'errorInAgent');
      assert.match(body.error.message, /RangeError|memory limit/);
    });
  });

  describe('pending host calls', () => {
    it('ends errorInAgent "too many pending calls" at once for 60,000 pending sleeps, with no listener warning', async () => {
      const warnings: string[] = [];
      const onWarning = (warning: Error) => warnings.push(warning.name);
      process.on('warning', onWarning);
      try {
        const started = Date.now();
        const body = await run(`export default async function (sys) {
          await Promise.all(Array.from({length: 60000}, () => sys.sleep(10000)));
          sys.say('slept');
        }`);
        assert.equal(body.resultCode, 'errorInAgent');
        assert.match(body.error.message, /too many pending calls: a run may wait on at most 1000/);
        assert.ok(Date.now() - started < 5000, `answered after ${Date.now() - started} ms, not at the 15 s max runtime`);
      } finally {
        process.off('warning', onWarning);
      }
      assert.deepEqual(warnings.filter((name) => name === 'MaxListenersExceededWarning'), []);
    });

    it('lets a run wait on 1,000 calls at once', async () => {
      const body = await run(`export default async function (sys) {
        await Promise.all(Array.from({length: 1000}, () => sys.sleep(10)));
        sys.say('slept');
      }`);
      assert.equal(body.resultCode, 'success', JSON.stringify(body.error));
    });
  });

  describe('nothing of one run is visible to a later run', () => {
    it("does not show account A's sys to account B's next run of the same agent (a property on Math)", async () => {
      const agentName = uniqueAgentName('oldsys');
      await publishAgent(
        stack.runtime.db,
        agentName,
        `export default async function (sys) {
          const old = Math.__oldSys; Math.__oldSys = sys; sys.say(JSON.stringify(old && {caller: old.caller, inputs: old.inputs}))
        }`,
      );
      const other = await createAccount(stack.runtime.db, 'user');
      const first = await execAgent(stack.url, key, { agentName, inputs: { token: 'A-secret' } });
      const second = await execAgent(stack.url, other.key, { agentName, inputs: {} });
      for (const res of [first, second]) {
        assert.equal(res.body.resultCode, 'errorInAgent');
        assert.match(res.body.error.message, /TypeError: Cannot add property __oldSys, object is not extensible/);
      }
      assert.doesNotMatch(JSON.stringify(second.body), /A-secret/);
    });

    for (const [what, leave, look] of [
      ['a replaced JSON.stringify', `JSON.stringify = (value) => 'replaced'`, `JSON.stringify({})`],
      ['a property on a prototype', `Array.prototype.kept = sys.inputs.token`, `[].kept ?? null`],
      [
        'a non-enumerable global defined in a microtask after the run returned',
        `Promise.resolve().then(() => Promise.resolve()).then(() => Object.defineProperty(globalThis, 'kept', { value: sys.inputs.token }))`,
        `globalThis.kept ?? null`,
      ],
    ] as const) {
      it(`refuses ${what}, and the next run sees nothing of it`, async () => {
        const agentName = uniqueAgentName('leave');
        await publishAgent(
          stack.runtime.db,
          agentName,
          `export default async function (sys) {
            sys.vars.seen = ${look};
            if (sys.inputs.token) { ${leave}; }
          }`,
        );
        const first = await execAgent(stack.url, key, { agentName, inputs: { token: 'A-secret' } });
        assert.equal(first.body.resultCode, 'errorInAgent', JSON.stringify(first.body));
        assert.match(first.body.error.message, /TypeError: Cannot/);
        const second = await execAgent(stack.url, key, { agentName, inputs: {} });
        assert.equal(second.body.resultCode, 'success');
        assert.doesNotMatch(JSON.stringify(second.body), /A-secret|replaced/);
      });
    }

    it('keeps Error subclasses working under frozen built-ins (this.name, Foo.prototype.constructor)', async () => {
      const body = await run(`
        class NotFound extends Error { constructor(m) { super(m); this.name = 'NotFound'; } }
        function Legacy() {}
        Legacy.prototype = { hello() { return 'hi'; } };
        Legacy.prototype.constructor = Legacy;
        export default async function (sys) {
          const err = new NotFound('gone');
          sys.say([err.name, String(err), new Legacy().hello(), new Legacy().constructor === Legacy].join(' '));
        }`);
      assert.equal(body.resultCode, 'success', JSON.stringify(body.error));
      assert.deepEqual(body.output, [{ type: 'text', text: 'NotFound NotFound: gone hi true' }]);
    });
  });

  describe('sizes', () => {
    it('ends errorInAgent for an ask of 200,000 inputs, and stores no pause', async () => {
      const body = await run(`export default async function (sys) {
        await sys.ask({ message: 'Many?', inputs: Array.from({length: 200000}, (_, i) => ({ name: 'f' + i, type: 'str' })) });
      }`);
      assert.equal(body.resultCode, 'errorInAgent');
      assert.match(body.error.message, /at most 50 inputs, not 200000/);
      const pause = await stack.runtime.db.selectFrom('paused_asks').select('convid').where('convid', '=', body.convid).executeTakeFirst();
      assert.equal(pause, undefined);
    });

    const askEdges: [string, string, RegExp][] = [
      ['51 inputs', `{ message: 'm', inputs: Array.from({length: 51}, (_, i) => ({ name: 'f' + i, type: 'str' })) }`, /at most 50 inputs/],
      ['a message of 4,001 characters', `{ message: '😀'.repeat(4001), inputs: [{ name: 'a', type: 'str' }] }`, /message: at most 4000 characters/],
      ['a label of 1,001 characters', `{ message: 'm', inputs: [{ name: 'a', type: 'str', label: 'l'.repeat(1001) }] }`, /label: at most 1000 characters/],
      ['a description of 1,001 characters', `{ message: 'm', inputs: [{ name: 'a', type: 'str', description: 'd'.repeat(1001) }] }`, /description: at most 1000 characters/],
      ['an option label of 1,001 characters', `{ message: 'm', inputs: [{ name: 'a', type: 'chooseOne', options: [{ value: 'v', label: 'l'.repeat(1001) }] }] }`, /label: at most 1000 characters/],
      ['201 options', `{ message: 'm', inputs: [{ name: 'a', type: 'chooseOne', options: Array.from({length: 201}, (_, i) => 'o' + i) }] }`, /at most 200 options/],
    ];
    for (const [what, spec, message] of askEdges) {
      it(`ends errorInAgent for an ask with ${what}`, async () => {
        const body = await run(`export default async function (sys) { await sys.ask(${spec}); }`);
        assert.equal(body.resultCode, 'errorInAgent');
        assert.match(body.error.message, message);
      });
    }

    it('asks at every limit: 50 inputs, 4,000-character message, 1,000-character labels, 200 options', async () => {
      const body = await run(`export default async function (sys) {
        const inputs = Array.from({length: 49}, (_, i) => ({ name: 'f' + i, type: 'str', label: 'l'.repeat(1000), description: 'd'.repeat(1000) }));
        inputs.push({ name: 'pick', type: 'chooseOne', options: Array.from({length: 200}, (_, i) => ({ value: 'o' + i, label: 'x'.repeat(1000) })) });
        await sys.ask({ message: '😀'.repeat(4000), inputs });
      }`);
      assert.equal(body.resultCode, 'ask', JSON.stringify(body.error));
      assert.equal(body.askInput.inputs.length, 50);
    });

    it('keeps 2,000 characters of a 20 MB sys.fail, in the answer and in the error report', async () => {
      const body = await run(`export default async function (sys) { sys.fail('x'.repeat(20 * 1024 * 1024)); }`);
      assert.equal(body.resultCode, 'failCommand');
      assert.equal(body.error.message.length, 2000);
      assert.ok(body.error.message.endsWith('x…'));
      const admin = await createAccount(stack.runtime.db, 'admin');
      const report = await post(stack.url, '/api/admin/errorReport', {}, { key: admin.key });
      const row = report.body.rows.find((r: { convid: string }) => r.convid === body.convid);
      assert.ok(row, 'the run is in the error report');
      assert.ok(JSON.stringify(row).length < 4000, 'its row is small');
    });

    it('cuts a fetch error naming a 500 kB URL, as a plain user reaches it through agents/http-api.ts', async () => {
      const { readFile } = await import('node:fs/promises');
      const source = await readFile(new URL('../../../agents/http-api.ts', import.meta.url), 'utf8');
      const body = await run(source, { url: `http://127.0.0.1/${'x'.repeat(500_000)}` });
      assert.equal(body.resultCode, 'callFailed');
      assert.equal(body.error.message.length, 2000);
      assert.match(body.error.message, /^sys\.fetch GET http:\/\/127\.0\.0\.1\/x+…$/);
    });

    it('ends errorInAgent, not unexpected, for sys.vars nested 5,000 deep', async () => {
      const body = await run(`export default async function (sys) {
        let deep = {}; const top = deep;
        for (let i = 0; i < 5000; i++) { deep.next = {}; deep = deep.next; }
        sys.vars.deep = top;
      }`);
      assert.equal(body.resultCode, 'errorInAgent');
      assert.match(body.error.message, /sys\.vars is nested deeper than 64 levels/);
    });

    it('keeps sys.vars nested within 64 levels', async () => {
      const body = await run(`export default async function (sys) {
        let deep = sys.vars;
        for (let i = 0; i < 63; i++) { deep.next = {}; deep = deep.next; }
      }`);
      assert.equal(body.resultCode, 'success', JSON.stringify(body.error));
    });
  });
});
