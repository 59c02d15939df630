import type { TimelineEntry } from '../../shared/run-timeline.js';
import assert from 'node:assert/strict';
import type { Answers, JsonObject, OutputPart } from '../../shared/api.js';
import { createContextPool, type ContextPool } from '../../workers/sandbox/context-pool.js';
import { runSandbox } from '../../workers/sandbox/run-sandbox.js';
import type { SandboxEnding } from '../../workers/sandbox/sandbox-endings.js';
import type { JournalEntry, SandboxRun } from '../../workers/sandbox/sandbox.types.js';
import { compile, errorOf, makeRun, texts, varsOf, waitFor } from './sandbox-helpers.js';

/** An agent that ends the way `sys.inputs.mode` says; 'ok' succeeds. */
const modalAgent = `
export default async function (sys) {
  const mode = sys.inputs.mode;
  if (mode === 'ask') await sys.ask({ message: 'Name?', inputs: [{ name: 'n', type: 'str' }] });
  if (mode === 'fail') sys.fail('failing');
  if (mode === 'throw') null.x;
  if (mode === 'loop') while (true) {}
  if (mode === 'sleep') {
    // The host has the sleep before the log line that follows it.
    const long = sys.sleep(60_000);
    console.log('sleeping');
    await long;
  }
  if (mode === 'vars') sys.vars.f = () => 1;
  if (mode === 'catch') {
    try {
      await sys.sleep(60_000);
    } catch {
      sys.say('caught');
    }
  }
  sys.say('ok');
}`;

describe('sandbox warm isolates', () => {
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

  it('runs the same code again in the warm isolate its first run left', async () => {
    const code = await compile(`export default async (sys) => sys.say('Hello, ' + sys.query)`);
    const first = await run(code);
    assert.deepEqual(pool.stats(), { hits: 0, misses: 1, joins: 0, idle: 1, retired: 0, evicted: 0, isolates: 1, restarts: 0 });
    const second = await run(code, { inputs: { query: 'again' } });
    assert.deepEqual(texts(first), ['Hello, hello']);
    assert.deepEqual(texts(second), ['Hello, again']);
    assert.deepEqual(pool.stats(), { hits: 1, misses: 1, joins: 0, idle: 1, retired: 0, evicted: 0, isolates: 1, restarts: 0 });
  });

  it('gives every run fresh module state and a fresh sys in a reused isolate', async () => {
    const code = await compile(`
      let counter = 0;
      const seen = [];
      export default async function (sys) {
        counter += 1;
        seen.push(sys.inputs.n);
        sys.vars.state = { counter, seen, query: sys.query ?? null, vars: Object.keys(sys.vars) };
        sys.vars.added = true;
      }`);
    const first = varsOf(await run(code, { inputs: { n: 1 } }));
    const second = varsOf(await run(code, { inputs: { n: 2 } }));
    assert.deepEqual(first.state, { counter: 1, seen: [1], query: null, vars: [] });
    assert.deepEqual(second.state, { counter: 1, seen: [2], query: null, vars: [] });
    assert.equal(pool.stats().hits, 1);
  });

  it('clears RegExp.$1 and lastMatch left by the previous run', async () => {
    const code = await compile(`
      export default async function (sys) {
        sys.vars.left = [RegExp.$1, RegExp.lastMatch];
        if (sys.inputs.secret) /(s\\w+)/.exec(sys.inputs.secret);
      }`);
    await run(code, { inputs: { secret: 'a secret99' } });
    assert.deepEqual(varsOf(await run(code)).left, ['', '']);
    assert.equal(pool.stats().hits, 1);
  });

  it('refuses to add or remove a global; the isolate stays warm and the next run sees the globals as they were', async () => {
    const code = await compile(`
      export default async function (sys) {
        sys.vars.seen = [typeof globalThis.leaked, typeof globalThis.Atomics];
        try {
          if (sys.inputs.add) globalThis.leaked = 'from an earlier run';
          if (sys.inputs.remove) delete globalThis.Atomics;
          if (sys.inputs.define) Object.defineProperty(globalThis, 'leaked', { value: 1 });
        } catch (err) {
          sys.vars.refused = err.message;
        }
      }`);
    for (const change of [{ add: true }, { remove: true }, { define: true }] as JsonObject[]) {
      const changed = varsOf(await run(code, { inputs: change }));
      assert.match(String(changed.refused), /not extensible|Cannot delete|Cannot define/, JSON.stringify(change));
      assert.deepEqual(varsOf(await run(code, { inputs: {} })).seen, ['undefined', 'object']);
    }
    assert.deepEqual(pool.stats(), { hits: 5, misses: 1, joins: 0, idle: 1, retired: 0, evicted: 0, isolates: 1, restarts: 0 });
  });

  it('refuses to replace what the sandbox installed (Math.random, Date.now, console.log): errorInAgent, and the next run draws from its seed', async () => {
    const code = await compile(`
      export default async function (sys) {
        sys.vars.r = Math.random();
        if (sys.inputs.patch === 'random') Math.random = () => 0.5;
        if (sys.inputs.patch === 'now') Date.now = () => 0;
        if (sys.inputs.patch === 'console') console.log = () => {};
      }`);
    const expected = varsOf(await run(code)).r;
    for (const patch of ['random', 'now', 'console']) {
      const patched = await run(code, { inputs: { patch } });
      assert.equal(patched.resultCode, 'errorInAgent', patch);
      assert.match(errorOf(patched).message, /TypeError: Cannot assign to read only property/);
      assert.equal(varsOf(await run(code)).r, expected, `${patch}: the next run draws from its seed`);
    }
  });

  for (const [mode, resultCode, saidBeforeEnd] of [
    ['ask', 'ask', []],
    ['fail', 'failCommand', []],
    ['throw', 'errorInAgent', []],
    ['vars', 'errorInAgent', ['ok']],
    ['sleep', 'timedOut', []],
    ['catch', 'timedOut', []],
  ] as const) {
    it(`gives the context of a run that ended ${resultCode} (${mode}) back once its code has unwound; nothing of it reaches the next run`, async () => {
      const code = await compile(modalAgent);
      await run(code, { inputs: { mode: 'ok' } });
      const live: string[] = [];
      const outcome = await run(code, { inputs: { mode }, maxRuntimeMs: 300, onPart: (part) => live.push(part.type === 'text' ? part.text : part.type) });
      assert.equal(outcome.resultCode, resultCode);
      assert.equal(pool.stats().hits, 1, 'it ran in the warm context');
      await waitFor(() => pool.stats().idle === 1, 'the context to come back');
      const next = await run(code, { inputs: { mode: 'ok' }, onPart: (part) => live.push(part.type === 'text' ? part.text : part.type) });
      assert.deepEqual(texts(next), ['ok']);
      assert.deepEqual(live, [...saidBeforeEnd, 'ok'], 'the ended run said nothing after its end, even where its code went on');
      assert.deepEqual(pool.stats(), { hits: 2, misses: 1, joins: 0, idle: 1, retired: 0, evicted: 0, isolates: 1, restarts: 0 });
    });
  }

  it('does not give back the context of a run still computing at its end: its isolate is disposed at once, and the next run starts cold', async () => {
    const code = await compile(modalAgent);
    await run(code, { inputs: { mode: 'ok' } });
    assert.equal((await run(code, { inputs: { mode: 'loop' }, maxRuntimeMs: 100 })).resultCode, 'timedOut');
    assert.equal(pool.stats().isolates, 0, 'the busy isolate was disposed with the run, not left spinning');
    assert.deepEqual(texts(await run(code, { inputs: { mode: 'ok' } })), ['ok']);
    assert.deepEqual(pool.stats(), { hits: 1, misses: 2, joins: 0, idle: 1, retired: 0, evicted: 0, isolates: 1, restarts: 1 });
  });

  it('does not start a run in an isolate while a run that ended there waiting on the host has not unwound', async () => {
    pool = createContextPool({ busyAfterEndMs: 200 });
    const code = await compile(`export default async function (sys) {
      if (sys.inputs.spin) {
        try {
          await sys.sleep(60_000);
        } finally {
          for (;;) {}
        }
      }
      sys.say('ok');
    }`);
    await run(code);
    assert.equal((await run(code, { inputs: { spin: true }, maxRuntimeMs: 100 })).resultCode, 'timedOut');
    assert.deepEqual(texts(await run(code)), ['ok'], 'the next run started in another isolate');
    assert.equal(pool.stats().misses, 2);
    await waitFor(() => pool.stats().isolates === 1, 'the isolate left spinning to be disposed');
  });

  it('gives back the context of a run stopped while it waits', async () => {
    const code = await compile(modalAgent);
    await run(code, { inputs: { mode: 'ok' } });
    const controller = new AbortController();
    let said = false;
    let sleeping = false;
    const stopped = run(code, { inputs: { mode: 'sleep' }, signal: controller.signal, onPart: () => (said = true), onTimeline: () => (sleeping = true) });
    await waitFor(() => sleeping, 'the run to sleep in the warm context');
    // The sleep call reaches the host in the I/O phase of a turn of its event loop, after the log line.
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    assert.equal((await stopped).resultCode, 'stopped');
    await waitFor(() => pool.stats().idle === 1, 'the context to come back');
    assert.deepEqual(texts(await run(code, { inputs: { mode: 'ok' } })), ['ok']);
    assert.equal(said, false);
    assert.deepEqual(pool.stats(), { hits: 2, misses: 1, joins: 0, idle: 1, retired: 0, evicted: 0, isolates: 1, restarts: 0 });
  });

  it('does not take an isolate from the pool for a run stopped before its start', async () => {
    const code = await compile(modalAgent);
    await run(code, { inputs: { mode: 'ok' } });
    assert.equal((await run(code, { signal: AbortSignal.abort() })).resultCode, 'stopped');
    assert.deepEqual(pool.stats(), { hits: 0, misses: 1, joins: 0, idle: 1, retired: 0, evicted: 0, isolates: 1, restarts: 0 });
  });

  describe('code a run leaves behind', () => {
    const leftoverAgent = `
      function later(step) {
        let p = Promise.resolve();
        for (let i = 0; i < 20; i++) p = p.then(() => undefined);
        return p.then(step);
      }
      export default async function (sys) {
        const leave = sys.inputs.leave;
        if (leave === 'pendingSleep') sys.sleep(50).then(() => sys.say('late'));
        // These run after the agent returned, but before the host has the run's result.
        if (leave === 'laterSleep') later(() => sys.sleep(50)).then(() => sys.say('late'));
        if (leave === 'laterSay') later(() => { sys.say('late'); console.log('late'); });
        if (sys.inputs.wait) await sys.sleep(100);
        sys.say('run ' + sys.inputs.n);
      }`;

    for (const [leave, reused, firstTexts] of [
      ['pendingSleep', false, ['run 1']],
      ['laterSleep', false, ['run 1']],
      ['laterSay', true, ['run 1', 'late']],
    ] as const) {
      it(`cannot reach the next run (${leave}); the isolate is ${reused ? '' : 'not '}reused`, async () => {
        const code = await compile(leftoverAgent);
        const live: string[] = [];
        const logs: string[] = [];
        const seen = { onPart: (part: OutputPart) => live.push(part.type === 'text' ? part.text : part.type), onTimeline: (entry: TimelineEntry) => entry.kind === 'log' && logs.push(entry.text) };
        const first = await run(code, { inputs: { leave, n: 1 }, ...seen });
        assert.deepEqual(texts(first), firstTexts);
        assert.equal(pool.stats().idle, reused ? 1 : 0);
        const liveOfFirst = live.length;
        const logsOfFirst = logs.length;
        const second = await run(code, { inputs: { wait: true, n: 2 }, ...seen });
        assert.deepEqual(texts(second), ['run 2']);
        assert.deepEqual(live.slice(liveOfFirst), ['run 2']);
        assert.equal(logs.length, logsOfFirst);
        assert.equal(pool.stats().hits, reused ? 1 : 0);
      });
    }
  });

  it('ends errorInAgent when code the run left queued writes a global after the agent returned; the next run sees nothing of it', async () => {
    const code = await compile(`
      export default async function (sys) {
        sys.vars.seen = typeof globalThis.late;
        if (sys.inputs.leave) {
          let p = Promise.resolve();
          for (let i = 0; i < 20; i++) p = p.then(() => undefined);
          p.then(() => { globalThis.late = 'leftover'; });
        }
      }`);
    const left = await run(code, { inputs: { leave: true } });
    assert.equal(left.resultCode, 'errorInAgent');
    assert.match(errorOf(left).message, /Cannot add property late/);
    assert.equal(varsOf(await run(code)).seen, 'undefined');
  });

  it('draws the same Math.random sequence for a seed in a fresh and in a warm isolate', async () => {
    const code = await compile(`export default async function (sys) { sys.vars.r = [Math.random(), Math.random(), Math.random()]; }`);
    const fresh = varsOf(await run(code, { randomSeed: 7 })).r;
    const other = varsOf(await run(code, { randomSeed: 8 })).r;
    const warm = varsOf(await run(code, { randomSeed: 7 })).r;
    assert.deepEqual(warm, fresh);
    assert.notDeepEqual(other, fresh);
    assert.equal(pool.stats().hits, 2);
  });

  it('journals Date in a warm isolate and replays it there', async () => {
    const code = await compile(`
      export default async function (sys) {
        if (sys.inputs.warmUp) return;
        const d = Date.now();
        const a = await sys.ask({ message: 'Name?', inputs: [{ name: 'n', type: 'str' }] });
        sys.vars.result = { d, later: new Date().getTime(), name: a.n };
      }`);
    await run(code, { inputs: { warmUp: true } });
    const before = Date.now();
    const asked = await run(code);
    assert.equal(asked.resultCode, 'ask');
    if (asked.resultCode !== 'ask') return;
    assert.equal(pool.stats().hits, 1);
    const [now, ask] = asked.journal;
    assert.equal(now?.op, 'now');
    const recorded = (now as Extract<JournalEntry, { op: 'now' }>).value;
    assert.ok(recorded >= before && recorded <= Date.now());
    await waitFor(() => Date.now() > recorded + 5, 'the clock to move');

    await waitFor(() => pool.stats().idle === 1, "the asking run's context to come back");
    const answers: Answers = { n: 'Ada' };
    const resumed = varsOf(await run(code, { journal: [now!, { ...(ask as Extract<JournalEntry, { op: 'ask' }>), answers }] }));
    assert.equal(pool.stats().hits, 2, 'the resumed run ran warm');
    const result = resumed.result as { d: number; later: number; name: string };
    assert.equal(result.d, recorded, 'Date.now() replayed');
    assert.ok(result.later > recorded, 'new Date() after the replay reads the live clock');
    assert.equal(result.name, 'Ada');
  });

  it('reports the same error line and column in a warm isolate as in a fresh one', async () => {
    const code = await compile(`export default async function (sys) {\n  if (sys.inputs.fail) {\n    null.x;\n  }\n}`);
    const fresh = errorOf(await run(code, { inputs: { fail: true } }));
    await run(code);
    const warm = errorOf(await run(code, { inputs: { fail: true } }));
    assert.equal(pool.stats().hits, 2, 'the context of the run that threw came back too');
    assert.equal(typeof fresh.line, 'number');
    assert.deepEqual(warm, fresh);
  });
});
