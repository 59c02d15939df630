import assert from 'node:assert/strict';
import { runSandbox } from '../../workers/sandbox/run-sandbox.js';
import { compile, errorOf, makeRun, runAgent, texts, waitFor } from './sandbox-helpers.js';

describe('sandbox result codes', () => {
  it('ends success when the agent returns', async () => {
    const outcome = await runAgent(`export default async function (sys) { sys.say('hi'); }`);
    assert.equal(outcome.resultCode, 'success');
  });

  for (const [name, body] of [
    ['TypeError', 'null.x;'],
    ['ReferenceError', 'notDefined + 1;'],
    ['SyntaxError', "JSON.parse('{');"],
    ['RangeError', 'new Array(-1);'],
  ]) {
    it(`ends errorInAgent for a ${name}, with message and location`, async () => {
      const outcome = await runAgent(`export default async function (sys) {\n  sys.say('partial');\n  ${body}\n}`);
      assert.equal(outcome.resultCode, 'errorInAgent');
      const error = errorOf(outcome);
      assert.match(error.message, new RegExp(`^${name}: `));
      assert.equal(typeof error.line, 'number');
      assert.equal(typeof error.column, 'number');
      assert.deepEqual(texts(outcome), ['partial'], 'a failed outcome keeps the output made before it');
    });
  }

  it('ends errorInAgent when there is no default export function', async () => {
    for (const source of ['export const x = 1;', 'export default 42;']) {
      const outcome = await runAgent(source);
      assert.equal(outcome.resultCode, 'errorInAgent');
      assert.match(errorOf(outcome).message, /no default export function/);
    }
  });

  it('ends errorInAgent for a TypeError thrown by the module top level', async () => {
    const outcome = await runAgent(`const x = null; x.y; export default async function () {}`);
    assert.equal(outcome.resultCode, 'errorInAgent');
    assert.match(errorOf(outcome).message, /^TypeError/);
  });

  it('ends unexpected for anything else thrown', async () => {
    const error = await runAgent(`export default async function () { throw new Error('custom'); }`);
    assert.equal(error.resultCode, 'unexpected');
    assert.equal(errorOf(error).message, 'custom');
    const str = await runAgent(`export default async function () { throw 'just a string'; }`);
    assert.equal(str.resultCode, 'unexpected');
    assert.equal(errorOf(str).message, 'just a string');
  });

  it('ends callFailed for an uncaught sys.fetch failure, and goes on when it is caught', async () => {
    const uncaught = await runAgent(`export default async function (sys) { await sys.fetch('http://127.0.0.1:9/'); }`);
    assert.equal(uncaught.resultCode, 'callFailed');
    assert.match(errorOf(uncaught).message, /destination refused/);
    const caught = await runAgent(
      `export default async function (sys) { try { await sys.fetch('http://127.0.0.1:9/'); } catch (e) { sys.say('caught ' + e.name); } }`,
    );
    assert.equal(caught.resultCode, 'success');
    assert.deepEqual(texts(caught), ['caught FetchError']);
  });

  it('ends errorInAgent when vars stop being JSON or grow too large', async () => {
    const fn = await runAgent(`export default async function (sys) { sys.vars.f = () => 1; }`);
    assert.equal(fn.resultCode, 'errorInAgent');
    assert.match(errorOf(fn).message, /sys\.vars must stay JSON/);
    const big = await runAgent(`export default async function (sys) { sys.conv.big = 'x'.repeat(1100 * 1024); }`);
    assert.equal(big.resultCode, 'errorInAgent');
    assert.match(errorOf(big).message, /variables too large/);
  });

  it('ends errorInAgent for an invalid ask spec', async () => {
    const outcome = await runAgent(`export default async function (sys) { await sys.ask({ message: 'm', inputs: [{ name: 'a', type: 'chooseOne' }] }); }`);
    assert.equal(outcome.resultCode, 'errorInAgent');
    assert.match(errorOf(outcome).message, /^TypeError: sys\.ask: inputs\[0\]\.options is required/);
  });

  it('ends errorInAgent when output passes 1 MiB', async () => {
    const outcome = await runAgent(
      `export default async function (sys) { const kb = 'x'.repeat(128 * 1024); for (let i = 0; i < 9; i++) sys.say(kb); }`,
      { memoryMb: 64 },
    );
    assert.equal(outcome.resultCode, 'errorInAgent');
    assert.match(errorOf(outcome).message, /output too large/);
    assert.equal(outcome.output.length, 8);
  });

  it('ends errorInAgent, within the run, when a loop of small writes passes 1 MiB (written text is sent in batches)', async () => {
    const started = Date.now();
    const outcome = await runAgent(`export default async function (sys) { const kb = 'x'.repeat(1024); for (;;) sys.write(kb); }`, { memoryMb: 64 });
    assert.equal(outcome.resultCode, 'errorInAgent');
    assert.match(errorOf(outcome).message, /output too large/);
    assert.ok(Date.now() - started < 4000, 'ended by the limit, not the run time');
  });

  it('ends errorInAgent when the memory limit is exceeded', async () => {
    const outcome = await runAgent(
      `export default async function () { const keep = []; while (true) keep.push({ s: 'x'.repeat(64) + keep.length }); }`,
      { memoryMb: 16 },
    );
    assert.equal(outcome.resultCode, 'errorInAgent');
    assert.match(errorOf(outcome).message, /memory limit|allocation|Invalid/);
  });

  describe('timedOut', () => {
    for (const [what, body] of [
      ['a busy loop', 'while (true) {}'],
      ['a long sleep', 'await sys.sleep(60_000);'],
      ['a promise that never settles', 'await new Promise(() => {});'],
    ]) {
      it(`ends timedOut for ${what}`, async () => {
        const started = Date.now();
        const outcome = await runAgent(`export default async function (sys) { sys.say('started'); ${body} }`, { maxRuntimeMs: 300 });
        assert.equal(outcome.resultCode, 'timedOut');
        assert.ok(Date.now() - started < 1500, 'ended near the deadline');
        assert.deepEqual(texts(outcome), ['started']);
      });
    }
  });

  describe('stopped', () => {
    for (const [what, body] of [
      ['a busy loop', 'while (true) {}'],
      ['a pending sleep', 'await sys.sleep(60_000);'],
    ]) {
      it(`stops ${what} at once when the signal is aborted`, async () => {
        const controller = new AbortController();
        let running = false;
        const code = await compile(`export default async function (sys) { sys.log('running'); ${body} }`);
        const outcome = runSandbox(makeRun(code, { signal: controller.signal, maxRuntimeMs: 10_000, onTimeline: () => (running = true) }));
        await waitFor(() => running, 'the agent to start');
        const abortedAt = Date.now();
        controller.abort();
        const result = await outcome;
        assert.equal(result.resultCode, 'stopped');
        assert.ok(Date.now() - abortedAt < 100, `stopped within 100 ms (took ${Date.now() - abortedAt})`);
      });
    }

    it('ends stopped when the signal was aborted before the start', async () => {
      const outcome = await runAgent(`export default async function (sys) { sys.say('never'); }`, { signal: AbortSignal.abort() });
      assert.equal(outcome.resultCode, 'stopped');
      assert.deepEqual(outcome.output, []);
    });
  });
});
