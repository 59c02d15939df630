import type { Worker } from 'bullmq';
import type { Logger } from '../shared/logger.js';

/** How often the worker compares its memory with its budget. */
const checkEveryMs = 250;

/**
 * Memory, not a count, is what limits how many runs a worker holds (DESIGN §11): above
 * `budgetMb` of RSS the worker (each of its shards' queues) takes no new job (the running ones go on) until it is below again.
 * Returns what stops watching, and whether the worker is over its budget now.
 */
export function applyMemoryBackpressure(workers: readonly Worker[], budgetMb: number, logger: Logger): { stop(): void; overBudget(): boolean } {
  const budget = budgetMb * 1024 * 1024;
  let paused = false;
  const timer = setInterval(() => {
    const rss = process.memoryUsage.rss();
    if (!paused && rss > budget) {
      paused = true;
      logger.warn({ rssMb: Math.round(rss / 1048576), budgetMb }, 'worker over its memory budget: taking no new run');
      for (const worker of workers) void worker.pause(true).catch(() => undefined);
    } else if (paused && rss < budget * 0.9) {
      paused = false;
      logger.info({ rssMb: Math.round(rss / 1048576), budgetMb }, 'worker under its memory budget again');
      for (const worker of workers) worker.resume();
    }
  }, checkEveryMs);
  timer.unref();
  return { stop: () => clearInterval(timer), overBudget: () => paused };
}
