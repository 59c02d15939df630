import type { RedisClient } from '../../runs/redis-connection.js';
import { Counter, type Metric, type Registry } from 'prom-client';
import { readRunCounts, readRunDurations, type HistogramSeries } from '../../runs/run-metrics.js';

const histograms: { name: string; help: string; series: HistogramSeries }[] = [
  { name: 'agentexec_run_duration_seconds', help: 'Duration of ended runs in their worker, cluster-wide (runs whose worker died are not in it).', series: '' },
  { name: 'agentexec_run_queue_wait_seconds', help: 'Time runs waited in the queue before a worker took them, cluster-wide (DESIGN §16).', series: 'wait:' },
];

/**
 * Registers the cluster-wide run metrics the workers add to Redis (runs/run-metrics.ts), read at
 * scrape time: `agentexec_runs_total{resultCode}`, and the `agentexec_run_duration_seconds` and
 * `agentexec_run_queue_wait_seconds` histograms.
 * While Redis is unreachable they have no series; the rest of /metrics still answers.
 */
export function registerRunMetrics(registry: Registry, redis: RedisClient, prefix: string): void {
  new Counter({
    name: 'agentexec_runs_total',
    help: 'Runs ended, by result code, cluster-wide.',
    labelNames: ['resultCode'] as const,
    registers: [registry],
    async collect() {
      const counts = await readRunCounts(redis, prefix).catch(() => ({}));
      this.reset();
      for (const [resultCode, count] of Object.entries(counts)) this.inc({ resultCode }, count);
    },
  });
  for (const histogram of histograms) registry.registerMetric(runDurationHistogram(redis, prefix, histogram));
}

/**
 * prom-client's Histogram can only observe values, not take counts made elsewhere; a registry asks a
 * metric only for its name, type and `get()`, so this one answers the histogram's series itself.
 */
function runDurationHistogram(redis: RedisClient, prefix: string, { name: durationName, help, series }: (typeof histograms)[number]): Metric {
  const metric = { name: durationName, help, type: 'histogram', aggregator: 'sum' };
  return {
    ...metric,
    reset: () => undefined,
    async get() {
      const durations = await readRunDurations(redis, prefix, series).catch(() => undefined);
      if (!durations) return { ...metric, values: [] };
      const values = [
        ...durations.buckets.map(({ le, count }) => ({ metricName: `${durationName}_bucket`, labels: { le }, value: count })),
        { metricName: `${durationName}_sum`, labels: {}, value: durations.sumSeconds },
        { metricName: `${durationName}_count`, labels: {}, value: durations.count },
      ];
      return { ...metric, values };
    },
  } as unknown as Metric;
}
