import type { RedisClient } from './redis-connection.js';
import type { ResultCode } from '../shared/api.js';
import { runCountsMetricsKey, runDurationMetricsKey } from '../shared/channels.js';
import { scriptCommand } from './redis-script.js';

/**
 * Run metrics, cluster-wide. Workers have no HTTP server and there may be many, so ended runs are
 * added to two Redis hashes, and every web process's /metrics reads them at scrape time: the same
 * numbers from any web process. The second hash holds two histograms: how long runs took in their
 * worker, and how long they waited in the queue for one (DESIGN §16; fields prefixed `wait:`).
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

/**
 * Adds to the counts hash (KEYS[1]) the ARGV[1] field/increment pairs that follow ARGV[1], and to the
 * durations hash (KEYS[2]) the pairs after those. One script, so a scrape never sees a count without
 * its duration.
 */
const addCounts = scriptCommand<(string | number)[]>(
  2,
  `
local counts = tonumber(ARGV[1])
for i = 2, 2 * counts, 2 do redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1]) end
for i = 2 * counts + 2, #ARGV, 2 do redis.call('HINCRBY', KEYS[2], ARGV[i], ARGV[i + 1]) end
`,
);

/** Ended runs added up and not sent yet: by result code, and by duration bucket with their sum and count. */
interface Tally {
  counts: Map<string, number>;
  durations: Map<string, number>;
}

const emptyTally = (): Tally => ({ counts: new Map(), durations: new Map() });

function addTo(map: Map<string, number>, field: string, by: number): void {
  map.set(field, (map.get(field) ?? 0) + by);
}

/** Counts one run in the tally: its result code and, when known, its duration. */
function tallyRun(tally: Tally, resultCode: ResultCode, durationMs?: number): void {
  addTo(tally.counts, resultCode, 1);
  if (durationMs !== undefined) tallyTime(tally, '', durationMs);
}

/** One observation of a histogram of the durations hash: `series` '' for run durations, `wait:` for queue waits. */
function tallyTime(tally: Tally, series: HistogramSeries, ms: number): void {
  addTo(tally.durations, series + bucketField(runDurationBuckets.find((bound) => ms / 1000 <= bound) ?? infinity), 1);
  addTo(tally.durations, `${series}sum_ms`, Math.round(ms));
  addTo(tally.durations, `${series}count`, 1);
}

/** The histograms kept in the durations hash, by the prefix of their fields. */
export type HistogramSeries = '' | 'wait:';

function sendTally(redis: RedisClient, prefix: string, tally: Tally): Promise<unknown> {
  const pairs = (map: Map<string, number>) => [...map].flat();
  return addCounts(redis, runCountsMetricsKey(prefix), runDurationMetricsKey(prefix), tally.counts.size, ...pairs(tally.counts), ...pairs(tally.durations));
}

/**
 * Adds one ended run at once: its result code and, when known, its duration (a run whose worker died
 * has none). For runs ended off the hot path (a cancel in the queue, a lost run); the processes that
 * end runs by the thousand add them up in a RunMetricsRecorder instead. Resolves even when Redis
 * fails: metrics must never fail a run.
 */
export async function recordRunMetrics(redis: RedisClient, prefix: string, resultCode: ResultCode, durationMs?: number): Promise<void> {
  const tally = emptyTally();
  tallyRun(tally, resultCode, durationMs);
  await sendTally(redis, prefix, tally).catch(() => undefined);
}

/** A process's ended runs, added up in memory and sent to Redis together. */
export interface RunMetricsRecorder {
  /** Counts one ended run; synchronous, never fails. */
  record(resultCode: ResultCode, durationMs?: number): void;
  /** Counts how long a run waited in the queue before a worker took it; synchronous, never fails. */
  recordQueueWait(waitMs: number): void;
  /** Sends what is counted and stops (a clean shutdown loses no run); waits for Redis `closeWaitMs` at most. */
  close(): Promise<void>;
}

/**
 * How often a recorder sends what it counted: a scrape sees a run this much later at most. A second:
 * far below any scrape interval, and a send costs Redis a dozen commands whatever the number of runs,
 * so at a hundred runs a second it adds about 0.1 command a run (at 250 ms it was 0.4).
 */
export const runMetricsFlushMs = 1000;

/** How long a closing recorder waits for Redis to take its last tally: metrics never hold a shutdown up. */
const closeWaitMs = 1000;

/**
 * A recorder that sends its tally every `flushEveryMs`, as one script call whatever the number of runs:
 * one call a run was a Redis round trip and a script run per call, a few per cent of what a short
 * call costs the machine. What a process that dies holds is lost (at most `flushEveryMs` of runs); a
 * tally Redis refuses is dropped too, as a single run's was.
 */
export function createRunMetricsRecorder(redis: RedisClient, prefix: string, { flushEveryMs = runMetricsFlushMs }: { flushEveryMs?: number } = {}): RunMetricsRecorder {
  let tally = emptyTally();
  const flush = async () => {
    if (tally.counts.size === 0 && tally.durations.size === 0) return;
    const taken = tally;
    tally = emptyTally();
    await sendTally(redis, prefix, taken).catch(() => undefined);
  };
  const timer = setInterval(() => void flush(), flushEveryMs);
  timer.unref();
  return {
    record(resultCode, durationMs) {
      tallyRun(tally, resultCode, durationMs);
    },
    recordQueueWait(waitMs) {
      tallyTime(tally, 'wait:', Math.max(0, waitMs));
    },
    async close() {
      clearInterval(timer);
      let timeout: NodeJS.Timeout | undefined;
      await Promise.race([flush(), new Promise<void>((resolve) => (timeout = setTimeout(resolve, closeWaitMs)))]);
      clearTimeout(timeout);
    },
  };
}

/** Runs ended so far by result code. */
export async function readRunCounts(redis: RedisClient, prefix: string): Promise<Record<string, number>> {
  const hash = await redis.hgetall(runCountsMetricsKey(prefix));
  return Object.fromEntries(Object.entries(hash).map(([code, count]) => [code, Number(count)]));
}

/** The run duration histogram so far (all zero before the first run), or with `series` 'wait:' the queue wait histogram. */
export async function readRunDurations(redis: RedisClient, prefix: string, series: HistogramSeries = ''): Promise<RunDurations> {
  const hash = await redis.hgetall(runDurationMetricsKey(prefix));
  const read = (field: string) => Number(hash[series + field] ?? 0);
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
