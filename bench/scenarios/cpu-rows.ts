import type { CpuCost } from '../cpu.js';
import type { Row } from '../scenario.js';

/**
 * Rows for where the CPU of a load went, per call: the web process, the worker process, the bench
 * itself, and the rest of the machine (Postgres, Redis, and whatever else runs on it meanwhile).
 */

const parts = ['web', 'worker', 'bench', 'rest'] as const;
const labels: Record<(typeof parts)[number], string> = {
  web: 'web process',
  worker: 'worker process',
  bench: 'bench client',
  rest: 'rest of machine (pg, redis, others)',
};

/** The rows, with ids `<prefix>.web` … (the hello load's are `cpu.web` …). */
export function cpuRows(load: string, prefix = 'cpu'): Row[] {
  return parts.map((part) => ({ id: `${prefix}.${part}`, label: `${load}: CPU per call, ${labels[part]}`, unit: 'µs/call' }));
}

/** Values for cpuRows, from a withCpuCost over [web, worker]. */
export function cpuPerCall(cost: CpuCost<unknown>, calls: number, prefix = 'cpu'): Record<string, number> {
  const [web = Number.NaN, worker = Number.NaN] = cost.processMs;
  const rest = cost.machineMs - web - worker - cost.ownMs;
  const ms = { web, worker, bench: cost.ownMs, rest };
  return Object.fromEntries(parts.map((part) => [`${prefix}.${part}`, (ms[part] * 1000) / calls]));
}
