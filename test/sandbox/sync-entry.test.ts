import assert from 'node:assert/strict';
import type { OutputPart } from '../../shared/api.js';
import { createContextPool, type ContextPool } from '../../workers/sandbox/context-pool.js';
import { runSandbox } from '../../workers/sandbox/run-sandbox.js';
import type { SandboxEnding } from '../../workers/sandbox/sandbox-endings.js';
import type { SandboxRun } from '../../workers/sandbox/sandbox.types.js';
import { compile, makeRun, texts, waitFor } from './sandbox-helpers.js';

/**
 * A run in a warm context of an idle isolate is entered on the host's thread (agent-context.ts): one
 * still computing after a few milliseconds, or ending on a stack overflow, is started over unseen in a
 * context entered the usual way (the pool counts it as a restart). Each test warms the context with a
 * quick first run.
 */
describe('sandbox runs entered on the host thread', () => {
  let pool: ContextPool;

  beforeEach(() => {
    pool = createContextPool();
  });

  afterEach(() => {
    pool.clear();
  });

  function run(code: string, overrides: Partial<SandboxRun> = {}): { live: string[]; done: Promise<SandboxEnding> } {
    const live: string[] = [];
    const onPart = (part: OutputPart) => live.push(part.type === 'text' ? part.text : part.type);
    return { live, done: runSandbox(makeRun(code, { onPart, ...overrides }), pool) };
  }

  it('starts a run still computing when its entry gives the thread back over, and sends its parts once', async () => {
    const code = await compile(`export default async function (sys) {
      sys.say('before');
      let sum = 0;
      for (let i = 0; i < sys.inputs.n; i++) sum += i % 7;
      sys.say('after ' + sum);
    }`);
    const quick = await run(code, { inputs: { n: 3 } }).done;
    assert.deepEqual(texts(quick), ['before', 'after 3']);
    const { live, done } = run(code, { inputs: { n: 100_000_000 } });
    const outcome = await done;
    assert.equal(outcome.resultCode, 'success', JSON.stringify(outcome));
    const expected = ['before', `after ${sumOfRemainders(100_000_000)}`];
    assert.deepEqual(texts(outcome), expected);
    assert.deepEqual(live, expected);
    assert.equal(pool.stats().restarts, 1);
  });

  it('starts a run that overflows the host thread\'s stack over where the stack is deeper, and it succeeds', async () => {
    const code = await compile(`
      function depth(n) { return n === 0 ? 0 : 1 + depth(n - 1); }
      export default async function (sys) {
        sys.say('deep ' + depth(sys.inputs.n));
      }`);
    // A first, shallow run leaves a warm context with the code compiled: the deep one overflows at once.
    const shallow = await run(code, { inputs: { n: 10 } }).done;
    assert.deepEqual(texts(shallow), ['deep 10']);
    assert.equal(pool.stats().restarts, 0);
    const { live, done } = run(code, { inputs: { n: 30_000 } });
    const outcome = await done;
    assert.equal(outcome.resultCode, 'success', JSON.stringify(outcome));
    assert.deepEqual(texts(outcome), ['deep 30000']);
    assert.deepEqual(live, ['deep 30000']);
    assert.equal(pool.stats().restarts, 1);
  });

  it('sends what a run reported on the host thread before the run waits on the host, not at its end', async () => {
    const code = await compile(`export default async function (sys) {
      sys.say('first');
      if (sys.inputs.wait) await sys.sleep(60_000);
      sys.say('last');
    }`);
    assert.deepEqual(texts(await run(code).done), ['first', 'last']);
    const controller = new AbortController();
    const { live, done } = run(code, { inputs: { wait: true }, signal: controller.signal });
    await waitFor(() => live.length > 0, 'the first part');
    assert.deepEqual(live, ['first']);
    controller.abort();
    const outcome = await done;
    assert.equal(outcome.resultCode, 'stopped');
    assert.deepEqual(texts(outcome), ['first']);
    assert.equal(pool.stats().restarts, 0);
  });

  it('enters a warm run on the host thread again after a run that waited on the host there and ended clean', async () => {
    const code = await compile(`export default async function (sys) {
      if (sys.inputs.wait) await sys.sleep(5);
      let sum = 0;
      for (let i = 0; i < sys.inputs.n; i++) sum += i % 7;
      sys.say('sum ' + sum);
    }`);
    assert.deepEqual(texts(await run(code, { inputs: { n: 3 } }).done), ['sum 3']);
    assert.deepEqual(texts(await run(code, { inputs: { n: 3, wait: true } }).done), ['sum 3']);
    // Only a run entered on the host thread is interrupted and started over.
    const busy = await run(code, { inputs: { n: 100_000_000 } }).done;
    assert.deepEqual(texts(busy), [`sum ${sumOfRemainders(100_000_000)}`]);
    assert.equal(pool.stats().restarts, 1);
  });
});

/** What the busy agent adds up: the sum of i % 7 for i below n. */
function sumOfRemainders(n: number): number {
  const whole = Math.floor(n / 7);
  let sum = whole * 21;
  for (let i = whole * 7; i < n; i++) sum += i % 7;
  return sum;
}
