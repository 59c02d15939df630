import type { Worker } from 'bullmq';

/**
 * How many jobs the worker takes from the queue before it has started them. BullMQ takes jobs until
 * the ones it holds reach its concurrency and hands them to the processor in the order it took them;
 * at a fixed concurrency of 1,000, a flood leaves hundreds taken and not started, and a caller's one
 * run, first in the queue's fair order (runs/fair-priority.ts), waits behind all of them in this
 * process, and in no other worker. The window keeps the concurrency at the runs started plus `ahead`
 * (at most `max`), so the queue keeps its order until a run can start and every worker takes its share.
 */
export interface FetchWindow {
  /** A run's processor began (call synchronously, first thing: BullMQ reads the concurrency right after). */
  started(): void;
  /** A run's processor is over. */
  ended(): void;
}

/** Runs ahead of the processors: enough to hide a fetch's round trip, few enough to keep the order. */
export const defaultFetchAhead = 8;

/**
 * One window over several workers (one per shard's queue, DESIGN §17): together they hold at most the
 * runs started plus `ahead` (at most `max`); each keeps its own started runs and takes at least one
 * more, so a run waiting on any shard is seen whatever the others hold. Answers each worker's window.
 */
export function applyFetchWindow(workers: readonly Worker[], max: number, ahead = defaultFetchAhead): FetchWindow[] {
  const running = workers.map(() => 0);
  let total = 0;
  const follow = () => {
    const room = Math.max(0, Math.min(ahead, max - total));
    workers.forEach((worker, i) => {
      worker.concurrency = Math.max(1, Math.min(max, running[i]! + room));
    });
  };
  follow();
  return workers.map((_, i) => ({
    started() {
      running[i] = running[i]! + 1;
      total += 1;
      follow();
    },
    ended() {
      running[i] = running[i]! - 1;
      total -= 1;
      follow();
    },
  }));
}
