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
  /**
   * A run's processor began (call synchronously, first thing: BullMQ reads the concurrency right after).
   * Undefined when the run may start now; otherwise it waits for a place, as the process's workers
   * together may have taken a few jobs past `max` (each takes at least one): await the promise first.
   */
  started(): Promise<void> | undefined;
  /** A run's processor is over (a run that waited for a place only once it had one). */
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
 * BullMQ workers a process runs on each of its `queues` (one a shard). One takes its jobs in sequence,
 * a round trip to Redis and a turn of the event loop each: under a burst of arrivals (a deploy, a
 * reconnect storm), with the loop busy starting the runs it took, a worker of one took its 1,000th job
 * seconds after it was queued. Several take theirs side by side, sharing the same `ahead` between them
 * (fetchAheadOf). A process allowed few runs keeps one a queue: each worker takes at least one job,
 * whatever the window says. The shards share the 8: each BullMQ worker costs the process a blocking
 * connection and its own polling, and with 8 on each of 3 shards a worker made 0.82-0.90 x the calls/s
 * of one shard at 64 in flight (bench:cluster), where it had made more.
 */
export const maxFetchChains = 8;

/** Runs allowed per chain at least: below it, fewer chains. */
const runsPerChain = 64;

export function fetchChains(maxRuns: number, queues = 1): number {
  return Math.max(1, Math.floor(Math.min(maxFetchChains, Math.floor(maxRuns / runsPerChain)) / queues));
}

/** Each chain's share of `ahead` (at least one run). */
export function fetchAheadOf(chains: number, ahead = defaultFetchAhead): number {
  return Math.max(1, Math.ceil(ahead / chains));
}

/**
 * One window over several workers (several per queue, one queue per shard, DESIGN §17): each holds its
 * runs started plus `ahead` (the process's runs at most `max`, lent places aside), and takes at least
 * one more, so a run waiting on any shard is seen whatever the others hold. Taking one more each, they
 * may together hold a few runs past `max`: those wait for a place (`started`), so no more than `max`
 * ever run. Answers each worker's window.
 */
export function applyFetchWindow(workers: readonly Worker[], max: number, ahead = defaultFetchAhead): FetchWindow[] {
  const running = workers.map(() => 0);
  let total = 0;
  // Places lent by runs waiting on their children: held by BullMQ, not counted against `max`.
  let lent = 0;
  // Runs taken past `max`, in the order they came, each starting as a place frees.
  const waitingForPlace: { worker: number; admit: () => void }[] = [];
  const follow = () => {
    const room = Math.max(0, Math.min(ahead, max - (total - lent)));
    workers.forEach((worker, i) => {
      worker.concurrency = Math.max(1, Math.min(max + lent, running[i]! + room));
    });
  };
  const start = (i: number) => {
    running[i] = running[i]! + 1;
    total += 1;
  };
  const admitWaiting = () => {
    while (waitingForPlace.length > 0 && total - lent < max) {
      const next = waitingForPlace.shift()!;
      start(next.worker);
      next.admit();
    }
  };
  follow();
  return workers.map((_, i) => ({
    started() {
      if (total - lent >= max) return new Promise<void>((admit) => waitingForPlace.push({ worker: i, admit }));
      start(i);
      follow();
      return undefined;
    },
    ended() {
      running[i] = running[i]! - 1;
      total -= 1;
      admitWaiting();
      follow();
    },
    lend() {
      lent += 1;
      admitWaiting();
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
