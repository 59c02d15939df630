/** Latency percentiles and the two load shapes every scenario uses: one at a time, and N in flight. */

export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export interface LoadResult extends LatencySummary {
  callsPerSecond: number;
}

/** Nearest-rank percentile of an ascending list. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function summarize(latencies: readonly number[]): LatencySummary {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { count: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? Number.NaN };
}

/** Runs `call` `count` times, one after the other; each call's duration in ms. */
export async function runSequential(count: number, call: (i: number) => Promise<void>): Promise<LoadResult> {
  const started = performance.now();
  const latencies = await timeEach(count, call);
  return { ...summarize(latencies), callsPerSecond: count / ((performance.now() - started) / 1000) };
}

/**
 * Runs `call` `count` times, one after the other, the i-th starting no sooner than i / `perSecond` s
 * after the first (at once when the one before ended later): one at a time at another load's pace.
 * The latencies are the calls' own, without the waits.
 */
export async function runPaced(count: number, perSecond: number, call: (i: number) => Promise<void>): Promise<LoadResult> {
  const started = performance.now();
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const wait = started + (i * 1000) / perSecond - performance.now();
    if (wait > 0) await delay(wait);
    const t0 = performance.now();
    await call(i);
    latencies.push(performance.now() - t0);
  }
  return { ...summarize(latencies), callsPerSecond: count / ((performance.now() - started) / 1000) };
}

/** Runs `call` `count` times, one after the other, and returns each call's duration in ms. */
export async function timeEach(count: number, call: (i: number) => Promise<void>): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await call(i);
    latencies.push(performance.now() - t0);
  }
  return latencies;
}

/** Runs `count` calls with `inFlight` callers, each starting its next call when its last one answered. */
export async function runConcurrent(count: number, inFlight: number, call: (i: number) => Promise<void>): Promise<LoadResult> {
  const latencies: number[] = [];
  let next = 0;
  let failed = false;
  const caller = async () => {
    while (!failed && next < count) {
      const i = next++;
      const t0 = performance.now();
      // The first failure stops every caller: the run is reported failed, not measured further.
      await call(i).catch((err: unknown) => {
        failed = true;
        throw err;
      });
      latencies.push(performance.now() - t0);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, caller));
  return { ...summarize(latencies), callsPerSecond: count / ((performance.now() - started) / 1000) };
}

/** Resolves after `ms`. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Rejects with `message` when `promise` has not settled within `ms`. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${message} (no answer within ${ms} ms)`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
