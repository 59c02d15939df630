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
  /**
   * A run that waits on runs of its own (sys.call's children, DESIGN §19) lends its place to them
   * until the returned function is called: counted out of `max` meanwhile, so a worker full of
   * parents still starts their children instead of waiting for them for ever.
   */
  lend(): () => void;
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
  // Places lent by runs waiting on their children: held by BullMQ, not counted against `max`.
  let lent = 0;
  const follow = () => {
    const room = Math.max(0, Math.min(ahead, max - (total - lent)));
    workers.forEach((worker, i) => {
      worker.concurrency = Math.max(1, Math.min(max + lent, running[i]! + room));
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
    lend() {
      lent += 1;
      follow();
      for (const worker of workers) wakeMainLoop(worker);
      let given = false;
      return () => {
        if (given) return;
        given = true;
        lent -= 1;
        follow();
      };
    },
  }));
}

/**
 * BullMQ's main loop reads the concurrency only when one of the fetches or jobs it holds settles: with
 * every job it holds waiting (parents on their children), a higher concurrency would be seen only at
 * the next job's end. It is woken the way BullMQ's own `resume()` wakes it (worker.js, 6.7): a settled
 * promise added to the queue it waits on.
 */
function wakeMainLoop(worker: Worker): void {
  (worker as unknown as { mainLoopQueue?: { add(promise: Promise<unknown>): void } | null }).mainLoopQueue?.add(Promise.resolve());
}
