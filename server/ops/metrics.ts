import type { ServerResponse } from 'node:http';
import type { Queue } from 'bullmq';
import type { RedisClient } from '../../runs/redis-connection.js';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { registerRunMetrics } from './run-metrics.collector.js';

/** The Prometheus metrics of one web process (DESIGN §7), exposed at GET /metrics. */
export interface WebMetrics {
  registry: Registry;
  /** Time to answer a request (for a stream: until its headers went out), by method, route pattern and status. */
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  /** SSE streams this web process has open. */
  openStreams: Gauge;
  /** Calls refused 429 by a limit per caller (DESIGN §16), by which limit: no account label, callers are unbounded. */
  runsRefused: Counter<'limit'>;
}

/** Where the scrape-time numbers come from. */
export interface MetricSources {
  redis: RedisClient;
  prefix: string;
  /** Queues whose waiting, active and delayed jobs are counted, by the `queue` label they get. */
  queues: Record<string, Queue>;
}

const queueStates = ['waiting', 'active', 'delayed'] as const;

/**
 * A registry of its own (not prom-client's global one), so several web processes in one Node process
 * (the tests) never clash: process metrics, HTTP latency, open streams, queue depth, and the
 * cluster-wide run metrics the workers keep in Redis.
 */
export function createWebMetrics(sources: MetricSources): WebMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const httpDuration = new Histogram({
    name: 'agentexec_http_request_duration_seconds',
    help: 'Time to answer an HTTP request (for a stream: until its headers went out).',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const openStreams = new Gauge({ name: 'agentexec_open_streams', help: 'SSE streams open on this web process.', registers: [registry] });
  new Gauge({
    name: 'agentexec_queue_jobs',
    help: 'Jobs in a queue by state, read at scrape time.',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      const counts = await Promise.all(Object.entries(sources.queues).map(async ([queue, q]) => [queue, await q.getJobCounts(...queueStates)] as const)).catch(() => []);
      // Redis down: the series disappear rather than show stale counts; the rest of /metrics still answers.
      this.reset();
      for (const [queue, byState] of counts) for (const state of queueStates) this.set({ queue, state }, byState[state] ?? 0);
    },
  });
  const runsRefused = new Counter({
    name: 'agentexec_runs_refused_by_limit_total',
    help: 'Calls refused 429 rateLimited by a limit per caller (runsPerMinute or runsInFlight), on this web process.',
    labelNames: ['limit'] as const,
    registers: [registry],
  });
  registerRunMetrics(registry, sources.redis, sources.prefix);
  return { registry, httpDuration, openStreams, runsRefused };
}

/** Counts `res` among the open streams until it closes (a response already closed is not counted: it would never leave). */
export function countOpenStream(gauge: Gauge, res: ServerResponse): void {
  if (res.closed) return;
  gauge.inc();
  res.once('close', () => gauge.dec());
}
