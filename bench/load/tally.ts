import { summarize, type LatencySummary } from '../stats.js';

/** Latencies and failures per kind of call, as the load test goes. */
export interface Tally {
  /** Times `call` and records its latency under `kind`; a throw is a failure of that kind (and rethrown). */
  time<T>(kind: string, call: () => Promise<T>): Promise<T>;
  fail(kind: string, message: string): void;
  calls(): number;
  failures(): number;
  report(): { kind: string; latency: LatencySummary; failures: number }[];
  /** The first failure messages, for the report. */
  samples(): string[];
  /** A cancelled call whose run ended before any cancel reached it (the machine overloaded): not a failure, but reported. */
  lateCancel(): void;
  lateCancels(): number;
}

const keptSamples = 20;

export function createTally(): Tally {
  const latencies = new Map<string, number[]>();
  const failures = new Map<string, number>();
  const samples: string[] = [];
  let calls = 0;
  let lateCancels = 0;
  const tally: Tally = {
    async time(kind, call) {
      const started = performance.now();
      calls += 1;
      try {
        return await call();
      } finally {
        const list = latencies.get(kind) ?? [];
        list.push(performance.now() - started);
        latencies.set(kind, list);
      }
    },
    fail(kind, message) {
      failures.set(kind, (failures.get(kind) ?? 0) + 1);
      if (samples.length < keptSamples) samples.push(`${kind}: ${message}`);
    },
    calls: () => calls,
    failures: () => [...failures.values()].reduce((a, b) => a + b, 0),
    report: () =>
      [...new Set([...latencies.keys(), ...failures.keys()])].sort().map((kind) => ({ kind, latency: summarize(latencies.get(kind) ?? []), failures: failures.get(kind) ?? 0 })),
    samples: () => [...samples],
    lateCancel: () => void (lateCancels += 1),
    lateCancels: () => lateCancels,
  };
  return tally;
}
