import { afterIoPoll } from '../../shared/after-io-poll.js';

/**
 * Cold starts take turns: making an isolate holds the main thread for several milliseconds, and a
 * burst of runs for new callers or agents (all fetched in one turn of the event loop) would otherwise
 * make them back to back. Between two polls for I/O, either one load that makes an isolate or up to
 * `loadsPerPoll` loads into isolates already made (their work is on the isolates' threads) take their
 * turn, so requests such as /healthz are answered in between. One load a poll was too few under a
 * burst of arrivals: with the loop busy with the runs it started, a poll came milliseconds after the
 * last, and the 200th of 200 new runs of one caller waited for its context for over a second.
 */
export const loadsPerPoll = 8;

interface Waiter {
  /** Whether its load would go into an isolate already made, asked as its turn comes. */
  light: () => boolean;
  /** Takes the turn: called in it, so that what it makes (the isolate it picks) is counted in it. */
  take: () => void;
}

const waiting: Waiter[] = [];
let polling = false;

/**
 * Resolves with `pick()`, called in the load's turn: it picks the isolate the load goes into (made
 * there when `light()` said none has room) and begins the load, so the next pick of the turn sees it.
 */
export function turnToLoad<T>(pick: () => T, light: () => boolean = () => false): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    waiting.push({
      light,
      take: () => {
        try {
          resolve(pick());
        } catch (err) {
          reject(err);
        }
      },
    });
    if (!polling) {
      polling = true;
      afterIoPoll(admitSome);
    }
  });
}

function admitSome(): void {
  let spent = 0;
  while (waiting.length > 0 && spent < loadsPerPoll) {
    const cost = waiting[0]!.light() ? 1 : loadsPerPoll;
    // A load that makes an isolate has a turn of its own.
    if (spent > 0 && cost > 1) break;
    spent += cost;
    waiting.shift()!.take();
  }
  if (waiting.length > 0) afterIoPoll(admitSome);
  else polling = false;
}
