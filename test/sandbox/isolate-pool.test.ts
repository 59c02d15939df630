import assert from 'node:assert/strict';
import { createIsolatePool, type IsolatePool } from '../../workers/sandbox/isolate-pool.js';
import { runSandbox } from '../../workers/sandbox/run-sandbox.js';
import type { SandboxOutcome, SandboxRun } from '../../workers/sandbox/sandbox.types.js';
import { compile, makeRun, texts, varsOf } from './sandbox-helpers.js';

describe('sandbox isolate pool', () => {
  let pool: IsolatePool;

  beforeEach(() => {
    pool = createIsolatePool();
  });

  afterEach(() => {
    pool.clear();
  });

  function run(code: string, overrides: Partial<SandboxRun> = {}): Promise<SandboxOutcome> {
    return runSandbox(makeRun(code, overrides), pool);
  }

  it('keeps at most maxIdle isolates, evicting the least recently used', async () => {
    pool = createIsolatePool({ maxIdle: 2 });
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((name) => compile(`export default async (sys) => sys.say('${name}')`)));
    await run(a!);
    await run(b!);
    await run(a!);
    await run(c!);
    assert.deepEqual(pool.stats(), { hits: 1, misses: 3, idle: 2, retired: 0, evicted: 1 });
    await run(b!);
    assert.equal(pool.stats().misses, 4, 'b was the least recently used');
  });

  it('runs concurrent runs of one code in isolates of their own and keeps each warm', async () => {
    const code = await compile(`export default async (sys) => { await sys.sleep(20); sys.say(String(sys.inputs.n)); }`);
    const first = await Promise.all([1, 2, 3].map((n) => run(code, { inputs: { n } })));
    assert.deepEqual(first.map(texts), [['1'], ['2'], ['3']]);
    assert.deepEqual(pool.stats(), { hits: 0, misses: 3, idle: 3, retired: 0, evicted: 0 });
    const second = await Promise.all([4, 5, 6].map((n) => run(code, { inputs: { n } })));
    assert.deepEqual(second.map(texts), [['4'], ['5'], ['6']]);
    assert.deepEqual(pool.stats(), { hits: 3, misses: 3, idle: 3, retired: 0, evicted: 0 });
  });

  it('retires an isolate after maxRunsPerIsolate runs', async () => {
    pool = createIsolatePool({ maxRunsPerIsolate: 2 });
    const code = await compile(`export default async (sys) => sys.say('hi')`);
    for (let i = 0; i < 3; i++) await run(code);
    assert.deepEqual(pool.stats(), { hits: 1, misses: 2, idle: 1, retired: 1, evicted: 0 });
  });

  it('keeps isolates apart by agent name and memory limit, even for the same code', async () => {
    const code = await compile(`export default async (sys) => sys.say(sys.agentName)`);
    assert.deepEqual(texts(await run(code, { agentName: 'one' })), ['one']);
    assert.deepEqual(texts(await run(code, { agentName: 'two' })), ['two'], 'another agent gets its own isolate');
    await run(code, { agentName: 'one', memoryMb: 64 });
    assert.deepEqual(pool.stats(), { hits: 0, misses: 3, idle: 3, retired: 0, evicted: 0 }, 'another memory limit too');
    await run(code, { agentName: 'one' });
    assert.equal(pool.stats().hits, 1);
  });

  it('never lends a warm isolate to a fresh run (a draft), nor keeps the isolate of one', async () => {
    const code = await compile(`export default async (sys) => sys.say('hi')`);
    await run(code);
    await run(code, { fresh: true });
    assert.deepEqual(pool.stats(), { hits: 0, misses: 1, idle: 1, retired: 0, evicted: 0 });
  });
});
