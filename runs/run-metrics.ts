import type { Redis } from 'ioredis';
import type { ResultCode } from '../shared/api.js';
import { runCountsMetricsKey, runDurationMetricsKey } from '../shared/channels.js';
import { scriptCommand } from './redis-script.js';

/**
 * Run metrics, cluster-wide. Workers have no HTTP server and there may be many, so each ended run is
 * added to two Redis hashes, and every web process's /metrics reads them at scrape time: the same
 * numbers from any web process.
 */

/** Upper bounds (seconds) of the run duration histogram's buckets; `+Inf` follows. */
export const runDurationBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;

const infinity = '+Inf';

/** Cumulative histogram read back from Redis. */
export interface RunDurations {
  /** Count of runs that took at most `le` seconds, for every bound in order, then `+Inf`. */
  buckets: { le: string; count: number }[];
  sumSeconds: number;
  count: number;
}

/** Counts a run by result code and, when ARGV[2] is not empty, in its duration bucket, the sum and the count. */
const countRun = scriptCommand<[countsKey: string, durationsKey: string, resultCode: string, bucket: string, durationMs: number]>(
  2,
  `
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
if ARGV[2] ~= '' then
  redis.call('HINCRBY', KEYS[2], ARGV[2], 1)
  redis.call('HINCRBY', KEYS[2], 'sum_ms', ARGV[3])
  redis.call('HINCRBY', KEYS[2], 'count', 1)
end
`,
);

/**
 * Adds one ended run: its result code and, when known, its duration (a run whose worker died has
 * none), counted in the one bucket it falls in (the reader sums them up). One script, so a scrape never
 * sees the count without the duration, and on an auto-pipelined connection it shares its socket write
 * with the run's end event. Resolves even when Redis fails: metrics must never fail a run.
 */
export async function recordRunMetrics(redis: Redis, prefix: string, resultCode: ResultCode, durationMs?: number): Promise<void> {
  const bucket = durationMs === undefined ? '' : bucketField(runDurationBuckets.find((bound) => durationMs / 1000 <= bound) ?? infinity);
  await countRun(redis, runCountsMetricsKey(prefix), runDurationMetricsKey(prefix), resultCode, bucket, Math.round(durationMs ?? 0)).catch(() => undefined);
}

/** Runs ended so far by result code. */
export async function readRunCounts(redis: Redis, prefix: string): Promise<Record<string, number>> {
  const hash = await redis.hgetall(runCountsMetricsKey(prefix));
  return Object.fromEntries(Object.entries(hash).map(([code, count]) => [code, Number(count)]));
}

/** The run duration histogram so far (all zero before the first run). */
export async function readRunDurations(redis: Redis, prefix: string): Promise<RunDurations> {
  const hash = await redis.hgetall(runDurationMetricsKey(prefix));
  const read = (field: string) => Number(hash[field] ?? 0);
  let below = 0;
  return {
    buckets: [...runDurationBuckets, infinity].map((le) => ({ le: String(le), count: (below += read(bucketField(le))) })),
    sumSeconds: read('sum_ms') / 1000,
    count: read('count'),
  };
}

/** The field counting the runs whose duration falls in the bucket ending at `le` (and above the one before). */
function bucketField(le: number | string): string {
  return `in:${le}`;
}
