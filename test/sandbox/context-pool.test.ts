import assert from 'node:assert/strict';
import { createContextPool, type ContextPool } from '../../workers/sandbox/context-pool.js';
import { runSandbox } from '../../workers/sandbox/run-sandbox.js';
import type { SandboxEnding } from '../../workers/sandbox/sandbox-endings.js';
import type { SandboxRun } from '../../workers/sandbox/sandbox.types.js';
import { compile, errorOf, makeRun, texts, waitFor } from './sandbox-helpers.js';

const otherCaller: SandboxRun['caller'] = { kind: 'user', id: 'user-2', role: 'developer' };

describe('sandbox context pool', () => {
  let pool: ContextPool;

  beforeEach(() => {
    pool = createContextPool();
  });

  afterEach(() => {
    pool.clear();
  });

  function run(code: string, overrides: Partial<SandboxRun> = {}): Promise<SandboxEnding> {
    return runSandbox(makeRun(code, overrides), pool);
  }

  it('keeps at most maxIdle contexts, evicting the least recently used with its isolate', async () => {
    pool = createContextPool({ maxIdle: 2 });
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((name) => compile(`export default async (sys) => sys.say('${name}')`)));
    await run(a!);
    await run(b!);
    await run(a!);
    await run(c!);
    assert.deepEqual(pool.stats(), { hits: 1, misses: 3, idle: 2, retired: 0, evicted: 1, isolates: 2, restarts: 0 });
    await run(b!);
    assert.equal(pool.stats().misses, 4, 'b was the least recently used');
  });

  it('runs concurrent runs of one caller in contexts of their own in one isolate, and keeps each warm', async () => {
    const code = await compile(`export default async (sys) => { await sys.sleep(20); sys.say(String(sys.inputs.n)); }`);
    const first = await Promise.all([1, 2, 3].map((n) => run(code, { inputs: { n } })));
    assert.deepEqual(first.map(texts), [['1'], ['2'], ['3']]);
    assert.deepEqual(pool.stats(), { hits: 0, misses: 3, idle: 3, retired: 0, evicted: 0, isolates: 1, restarts: 0 });
    const second = await Promise.all([4, 5, 6].map((n) => run(code, { inputs: { n } })));
    assert.deepEqual(second.map(texts), [['4'], ['5'], ['6']]);
    assert.deepEqual(pool.stats(), { hits: 3, misses: 3, idle: 3, retired: 0, evicted: 0, isolates: 1, restarts: 0 });
  });

  it('opens another isolate for the caller past contextsPerIsolate', async () => {
    pool = createContextPool({ contextsPerIsolate: 2 });
    const code = await compile(`export default async (sys) => { await sys.sleep(20); sys.say('hi'); }`);
    await Promise.all([1, 2, 3].map(() => run(code)));
    assert.equal(pool.stats().isolates, 2);
  });

  it('never puts runs of two callers in one isolate', async () => {
    const code = await compile(`export default async (sys) => { await sys.sleep(20); sys.say(sys.caller.id); }`);
    const outcomes = await Promise.all([run(code), run(code, { caller: otherCaller })]);
    assert.deepEqual(outcomes.map(texts), [['user-1'], ['user-2']]);
    assert.equal(pool.stats().isolates, 2);
  });

  it('retires a context after maxRunsPerContext runs', async () => {
    pool = createContextPool({ maxRunsPerContext: 2 });
    const code = await compile(`export default async (sys) => sys.say('hi')`);
    for (let i = 0; i < 3; i++) await run(code);
    assert.deepEqual(pool.stats(), { hits: 1, misses: 2, idle: 1, retired: 1, evicted: 0, isolates: 1, restarts: 0 });
  });

  it('seals an isolate after contextsPerIsolateLifetime loads: it keeps no idle context and the next run opens a new one', async () => {
    pool = createContextPool({ contextsPerIsolateLifetime: 2 });
    const code = await compile(`export default async (sys) => { await sys.sleep(20); sys.say('hi'); }`);
    await Promise.all([run(code), run(code)]);
    assert.deepEqual(pool.stats(), { hits: 0, misses: 2, idle: 0, retired: 2, evicted: 0, isolates: 0, restarts: 0 }, 'both contexts retired, the isolate gone');
    await run(code);
    assert.deepEqual(pool.stats(), { hits: 0, misses: 3, idle: 1, retired: 2, evicted: 0, isolates: 1, restarts: 0 });
  });

  it('seals an isolate whose heap a run left past half its limit, read as the run ends when nothing else runs in it', async () => {
    const code = await compile(`export default async (sys) => { const kept = new Array(5e6).fill(1.5); sys.say(String(kept.length)); }`);
    // 40 MB of doubles in a 64 MB heap (AGENT_MEMORY_MB 128, sandbox-isolate.ts heapLimitMb): past half of it.
    assert.deepEqual(texts(await run(code, { memoryMb: 128 })), ['5000000']);
    // No wait: the statistics were read on the spot, so the context was not kept.
    assert.deepEqual(pool.stats(), { hits: 0, misses: 1, idle: 0, retired: 1, evicted: 0, isolates: 0, restarts: 0 });
  });

  it('seals it too when another run is under way in it, once the statistics come back', async () => {
    const code = await compile(`export default async (sys) => {
      if (!sys.inputs.hold) return sys.say('quick');
      const kept = new Array(5e6).fill(1.5);
      await sys.sleep(300);
      sys.say(String(kept.length));
    }`);
    const held = run(code, { memoryMb: 128, inputs: { hold: true } });
    await waitFor(() => pool.stats().misses === 1, 'the holding run to start');
    assert.deepEqual(texts(await run(code, { memoryMb: 128 })), ['quick']);
    await waitFor(() => pool.stats().retired === 1, 'the quick run\'s context to be retired');
    assert.deepEqual(texts(await held), ['5000000']);
    assert.deepEqual(pool.stats(), { hits: 0, misses: 2, idle: 0, retired: 2, evicted: 0, isolates: 0, restarts: 0 });
  });

  it('keeps contexts apart by agent name and memory limit, even for the same code', async () => {
    const code = await compile(`export default async (sys) => sys.say(sys.agentName)`);
    assert.deepEqual(texts(await run(code, { agentName: 'one' })), ['one']);
    assert.deepEqual(texts(await run(code, { agentName: 'two' })), ['two'], 'another agent gets its own context');
    await run(code, { agentName: 'one', memoryMb: 64 });
    assert.deepEqual(pool.stats(), { hits: 0, misses: 3, idle: 3, retired: 0, evicted: 0, isolates: 3, restarts: 0 }, 'and its own isolate');
    await run(code, { agentName: 'one' });
    assert.equal(pool.stats().hits, 1);
  });

  it('never lends a warm context to a fresh run (a draft), nor keeps the one it used', async () => {
    const code = await compile(`export default async (sys) => sys.say('hi')`);
    await run(code);
    await run(code, { fresh: true });
    assert.deepEqual(pool.stats(), { hits: 0, misses: 1, idle: 1, retired: 0, evicted: 0, isolates: 1, restarts: 0 });
  });

  it('lets the caller\'s other runs in the isolate go on when one ends unclean, and gives both contexts back', async () => {
    const code = await compile(`export default async (sys) => {
      if (sys.inputs.fail) sys.fail('no');
      await sys.sleep(50);
      sys.say('done');
    }`);
    const [failed, done] = await Promise.all([run(code, { inputs: { fail: true } }), run(code)]);
    assert.equal(failed.resultCode, 'failCommand');
    assert.deepEqual(texts(done), ['done']);
    await waitFor(() => pool.stats().idle === 2, 'the failed run to unwind');
    assert.deepEqual(pool.stats(), { hits: 0, misses: 2, idle: 2, retired: 0, evicted: 0, isolates: 1, restarts: 0 });
  });

  it('stops an isolate a timed-out run left busy, ending the caller\'s other runs in it, and no other caller\'s', async () => {
    pool = createContextPool({ busyAfterEndMs: 200 });
    const code = await compile(`export default async (sys) => {
      if (sys.inputs.loop) { await sys.sleep(20); for (;;) {} }
      await sys.sleep(Number(sys.inputs.wait));
      sys.say('done');
    }`);
    const started = Date.now();
    const [looped, sameCaller, otherCallers] = await Promise.all([
      run(code, { inputs: { loop: true }, maxRuntimeMs: 300 }),
      run(code, { inputs: { wait: 100 } }),
      run(code, { inputs: { wait: 100 }, caller: otherCaller }),
    ]);
    assert.equal(looped.resultCode, 'timedOut');
    assert.equal(otherCallers.resultCode, 'success', 'another caller has an isolate of its own');
    assert.equal(sameCaller.resultCode, 'errorInAgent');
    assert.match(errorOf(sameCaller).message, /kept it busy for 200 ms after it ended/);
    assert.ok(Date.now() - started < 3000, 'the busy isolate was stopped soon after the run ended');
  });

  it('ends the caller\'s runs sharing an isolate whose heap limit one of them passed', async () => {
    const code = await compile(`export default async (sys) => {
      if (sys.inputs.hog) { await sys.sleep(20); const keep = []; for (;;) keep.push(new Array(1e5).fill(keep.length)); }
      await sys.sleep(5000);
    }`);
    const [hog, sameCaller, otherCallers] = await Promise.all([
      run(code, { inputs: { hog: true }, memoryMb: 16 }),
      run(code, { memoryMb: 16 }),
      run(code, { memoryMb: 16, caller: otherCaller, inputs: { hog: false }, maxRuntimeMs: 100 }),
    ]);
    assert.match(errorOf(hog).message, /memory limit exceeded: the agent used more than 16 MB/);
    assert.match(errorOf(sameCaller).message, /memory limit exceeded/);
    assert.equal(otherCallers.resultCode, 'timedOut', 'another caller ran on until its own deadline');
  });
});
