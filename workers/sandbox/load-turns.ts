import { afterIoPoll } from '../../shared/after-io-poll.js';

/**
 * Cold starts take turns: making an isolate and loading a context hold the main thread for several
 * milliseconds each, and a burst of runs for new callers or agents (all fetched in one turn of the
 * event loop) would otherwise do them back to back. Each waits until the one before it has had its turn
 * and the event loop has polled for I/O once more, so requests such as /healthz are answered in between.
 */
let lastLoad: Promise<void> = Promise.resolve();
export function turnToLoad(): Promise<void> {
  const mine = lastLoad.then(() => new Promise<void>((resolve) => afterIoPoll(resolve)));
  lastLoad = mine;
  return mine;
}
