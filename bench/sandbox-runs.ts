import { compileAgent } from '../shared/compile-agent.js';
import { createContextPool, type ContextPool } from '../workers/sandbox/context-pool.js';
import { runSandbox } from '../workers/sandbox/run-sandbox.js';
import type { SandboxRun } from '../workers/sandbox/sandbox.types.js';

/**
 * Cost of runSandbox alone on the hello agent: wall and CPU time per run, sequential and with 16 runs
 * in flight, with warm isolates reused (the default) and with reuse off (a fresh isolate per run).
 * CPU time is the whole process's, isolated-vm's threads included.
 * Usage: node --no-node-snapshot dist/bench/sandbox-runs.js [runs]
 */
const runs = Number(process.argv[2] ?? 4000);
const parallel = 16;

async function main(): Promise<void> {
  const compiled = await compileAgent(`export default async (sys) => sys.say('Hello, ' + (sys.query ?? 'world'))`);
  if (!compiled.ok) throw new Error('hello does not compile');
  const run: SandboxRun = {
    code: compiled.code,
    agentName: 'hello',
    convid: 'bench',
    inputs: { query: 'bench' },
    caller: { kind: 'serviceAccount', id: 'bench', role: 'user' },
    history: [],
    vars: {},
    conv: {},
    randomSeed: 1,
    journal: [],
    memoryMb: 64,
    maxRuntimeMs: 5000,
    httpAllow: [],
  };
  for (const [label, pool] of [
    ['warm isolates', createContextPool()],
    ['fresh isolate per run', createContextPool({ maxIdle: 0 })],
  ] as const) {
    await measure(`${label}, sequential`, pool, run, 1);
    await measure(`${label}, ${parallel} in parallel`, pool, run, parallel);
    console.log(`  pool ${JSON.stringify(pool.stats())}`);
    pool.clear();
  }
}

async function measure(label: string, pool: ContextPool, run: SandboxRun, lanes: number): Promise<void> {
  const perLane = Math.ceil(runs / lanes);
  const lane = async (count: number) => {
    for (let i = 0; i < count; i++) {
      const outcome = await runSandbox(run, pool);
      if (outcome.resultCode !== 'success') throw new Error(`hello ended ${outcome.resultCode}: ${JSON.stringify(outcome)}`);
    }
  };
  await Promise.all(Array.from({ length: lanes }, () => lane(Math.ceil(perLane / 10))));
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: lanes }, () => lane(perLane)));
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const total = perLane * lanes;
  const cpuMs = (cpu.user + cpu.system) / 1000;
  console.log(
    `${label.padEnd(40)} ${(wallMs / total).toFixed(3)} ms/run wall  ${(cpuMs / total).toFixed(3)} ms/run CPU  ${Math.round((total / wallMs) * 1000)} runs/s`,
  );
}

await main();
