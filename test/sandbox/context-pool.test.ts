import assert from 'node:assert/strict';
import { createContextPool, type ContextPool } from '../../workers/sandbox/context-pool.js';
import { runSandbox } from '../../workers/sandbox/run-sandbox.js';
import type { SandboxEnding } from '../../workers/sandbox/sandbox-endings.js';
import type { SandboxRun } from '../../workers/sandbox/sandbox.types.js';
import { compile, errorOf, makeRun, texts, varsOf, waitFor } from './sandbox-helpers.js';

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
    assert.deepEqual(pool.stats(), { hits: 1, misses: 3, joins: 0, idle: 2, retired: 0, evicted: 1, isolates: 2, restarts: 0 });
    await run(b!);
    assert.equal(pool.stats().misses, 4, 'b was the least recently used');
  });

  it('runs concurrent runs of one caller in one context, loaded once, and keeps it warm', async () => {
    const code = await compile(`export default async (sys) => { await sys.sleep(20); sys.say(String(sys.inputs.n)); }`);
    const first = await Promise.all([1, 2, 3].map((n) => run(code, { inputs: { n } })));
    assert.deepEqual(first.map(texts), [['1'], ['2'], ['3']]);
    assert.deepEqual(pool.stats(), { hits: 0, misses: 3, joins: 2, idle: 1, retired: 0, evicted: 0, isolates: 1, restarts: 0 }, 'two joined the load of the first');
    const second = await Promise.all([4, 5, 6].map((n) => run(code, { inputs: { n } })));
    assert.deepEqual(second.map(texts), [['4'], ['5'], ['6']]);
    assert.deepEqual(pool.stats(), { hits: 1, misses: 5, joins: 4, idle: 1, retired: 0, evicted: 0, isolates: 1, restarts: 0 }, 'two joined the one that took it');
  });

  it('with no warm contexts kept, loads one context per run for concurrent runs, none waiting on another\'s load', async () => {
    pool = createContextPool({ maxIdle: 0 });
    const code = await compile(`export default async (sys) => { await sys.sleep(5); sys.say(String(sys.inputs.n)); }`);
    const runs = Array.from({ length: 12 }, (_, n) => n);
    for (let round = 0; round < 2; round++) {
      const endings = await Promise.all(runs.map((n) => run(code, { inputs: { n } })));
      assert.deepEqual(endings.map(texts), runs.map((n) => [String(n)]));
    }
    // A run that waited on another's load (which it may never join) searched again, counting a miss each time.
    assert.deepEqual(pool.stats(), { hits: 0, misses: 24, joins: 0, idle: 0, retired: 24, evicted: 0, isolates: 0, restarts: 0 });
  });

  it('tells a run that joins a load under way that it waits (its start gate place goes to the next run), and not the run loading', async () => {
    const code = await compile(`export default (sys) => { sys.say(String(sys.inputs.n)); }`);
    const told = [0, 0, 0];
    const ran = await Promise.all([0, 1, 2].map((n) => run(code, { inputs: { n }, onWait: () => void (told[n]! += 1) })));
    assert.deepEqual(ran.map(texts), [['0'], ['1'], ['2']]);
    assert.equal(pool.stats().joins, 2);
    assert.deepEqual(told, [0, 1, 1], 'the code makes no async call: only the joiners were told');
  });

  it('gives each of the runs sharing a context its own Math.random, Date and console', async () => {
    const code = await compile(`export default async (sys) => {
      const drawn = [];
      for (let i = 0; i < 4; i++) { drawn.push(Math.random()); console.log('run ' + sys.inputs.n); await sys.sleep(1 + (sys.inputs.n * 7 + i * 3) % 5); }
      sys.vars.drawn = drawn;
      sys.vars.now = Date.now();
    }`);
    const seeds = [11, 22, 33, 44];
    const logs = seeds.map((): string[] => []);
    const together = await Promise.all(
      seeds.map((randomSeed, n) => run(code, { randomSeed, inputs: { n }, onTimeline: (entry) => void (entry.kind === 'log' && logs[n]!.push(entry.text)) })),
    );
    assert.equal(pool.stats().joins, 3, 'the four shared one context');
    for (const [n, outcome] of together.entries()) {
      const alone = await runSandbox(makeRun(code, { randomSeed: seeds[n]!, inputs: { n } }), createContextPool({ maxIdle: 0 }));
      assert.deepEqual(varsOf(outcome).drawn, varsOf(alone).drawn, `run ${n} drew its own seed's numbers`);
      assert.equal(typeof varsOf(outcome).now, 'number');
      assert.deepEqual(logs[n], [1, 2, 3, 4].map(() => `run ${n}`), `run ${n}'s console lines are its own`);
    }
  });

  it('lets a run that left a call pending close the context it shares, which goes when the last run in it ends', async () => {
    const code = await compile(`export default async (sys) => {
      if (sys.inputs.leave) { void sys.sleep(5000); return; }
      await sys.sleep(100);
      sys.say('done');
    }`);
    const [left, done] = await Promise.all([run(code, { inputs: { leave: true } }), run(code)]);
    assert.equal(left.resultCode, 'success');
    assert.deepEqual(texts(done), ['done'], 'the run beside it went on');
    assert.deepEqual(pool.stats(), { hits: 0, misses: 2, joins: 1, idle: 0, retired: 1, evicted: 0, isolates: 0, restarts: 0 }, 'the context went with its last run');
    await run(code);
    assert.equal(pool.stats().joins, 1, 'a closed context takes no run');
  });

  it('opens another context past runsPerContext, and another isolate past contextsPerIsolate or runsPerIsolate', async () => {
    const code = await compile(`export default async (sys) => { await sys.sleep(30); sys.say('hi'); }`);
    pool = createContextPool({ runsPerContext: 2, contextsPerIsolate: 2 });
    await Promise.all([1, 2, 3, 4, 5].map(() => run(code)));
    assert.deepEqual([pool.stats().joins, pool.stats().isolates], [2, 2], 'three contexts of two runs at most, two an isolate');
    pool.clear();
    pool = createContextPool({ runsPerContext: 2, runsPerIsolate: 3 });
    await Promise.all([1, 2, 3, 4].map(() => run(code)));
    assert.equal(pool.stats().isolates, 2, 'three runs at most an isolate');
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
    assert.deepEqual(pool.stats(), { hits: 1, misses: 2, joins: 0, idle: 1, retired: 1, evicted: 0, isolates: 1, restarts: 0 });
  });

  it('seals an isolate after contextsPerIsolateLifetime loads: it keeps no idle context and the next run opens a new one', async () => {
    pool = createContextPool({ contextsPerIsolateLifetime: 2, runsPerContext: 1 });
    const code = await compile(`export default async (sys) => { await sys.sleep(20); sys.say('hi'); }`);
    await Promise.all([run(code), run(code)]);
    assert.deepEqual(pool.stats(), { hits: 0, misses: 2, joins: 0, idle: 0, retired: 2, evicted: 0, isolates: 0, restarts: 0 }, 'both contexts retired, the isolate gone');
    await run(code);
    assert.deepEqual(pool.stats(), { hits: 0, misses: 3, joins: 0, idle: 1, retired: 2, evicted: 0, isolates: 1, restarts: 0 });
  });

  it('seals an isolate whose heap a run left past half its limit, read as the run ends when nothing else runs in it', async () => {
    const code = await compile(`export default async (sys) => { const kept = new Array(5e6).fill(1.5); sys.say(String(kept.length)); }`);
    // 40 MB of doubles in a 64 MB heap (AGENT_MEMORY_MB 128, sandbox-isolate.ts heapLimitMb): past half of it.
    assert.deepEqual(texts(await run(code, { memoryMb: 128 })), ['5000000']);
    // No wait: the statistics were read on the spot, so the context was not kept.
    assert.deepEqual(pool.stats(), { hits: 0, misses: 1, joins: 0, idle: 0, retired: 1, evicted: 0, isolates: 0, restarts: 0 });
  });

  it('seals it too when another run is under way in it, once the statistics come back', async () => {
    const code = await compile(`export default async (sys) => {
      if (!sys.inputs.hold) return sys.say('quick');
      const kept = new Array(5e6).fill(1.5);
      await sys.sleep(1000);
      sys.say(String(kept.length));
    }`);
    const held = run(code, { memoryMb: 128, inputs: { hold: true }, maxRuntimeMs: 10_000 });
    await waitFor(() => pool.stats().misses === 1, 'the holding run to start');
    assert.deepEqual(texts(await run(code, { memoryMb: 128 })), ['quick']);
    assert.equal(pool.stats().joins, 1, 'the quick run joined the holding one');
    // The statistics come back on their own time: the next quick runs join until the isolate is sealed.
    const deadline = Date.now() + 3000;
    while (pool.stats().isolates < 2 && Date.now() < deadline) await run(code, { memoryMb: 128 });
    assert.equal(pool.stats().isolates, 2, 'a run after the seal went to a new isolate');
    assert.deepEqual(texts(await held), ['5000000']);
    assert.equal(pool.stats().isolates, 1, 'the sealed isolate went with its last run');
  });

  it('keeps contexts apart by agent name and memory limit, even for the same code', async () => {
    const code = await compile(`export default async (sys) => sys.say(sys.agentName)`);
    assert.deepEqual(texts(await run(code, { agentName: 'one' })), ['one']);
    assert.deepEqual(texts(await run(code, { agentName: 'two' })), ['two'], 'another agent gets its own context');
    await run(code, { agentName: 'one', memoryMb: 64 });
    assert.deepEqual(pool.stats(), { hits: 0, misses: 3, joins: 0, idle: 3, retired: 0, evicted: 0, isolates: 3, restarts: 0 }, 'and its own isolate');
    await run(code, { agentName: 'one' });
    assert.equal(pool.stats().hits, 1);
  });

  it('never lends a warm context to a fresh run (a draft), nor keeps the one it used', async () => {
    const code = await compile(`export default async (sys) => sys.say('hi')`);
    await run(code);
    await run(code, { fresh: true });
    assert.deepEqual(pool.stats(), { hits: 0, misses: 1, joins: 0, idle: 1, retired: 0, evicted: 0, isolates: 1, restarts: 0 });
  });

  it('lets the caller\'s other runs in the context go on when one ends unclean, and gives the context back', async () => {
    const code = await compile(`export default async (sys) => {
      if (sys.inputs.fail) sys.fail('no');
      await sys.sleep(50);
      sys.say('done');
    }`);
    const [failed, done] = await Promise.all([run(code, { inputs: { fail: true } }), run(code)]);
    assert.equal(failed.resultCode, 'failCommand');
    assert.deepEqual(texts(done), ['done']);
    await waitFor(() => pool.stats().idle === 1, 'the failed run to unwind');
    assert.deepEqual(pool.stats(), { hits: 0, misses: 2, joins: 1, idle: 1, retired: 0, evicted: 0, isolates: 1, restarts: 0 });
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
