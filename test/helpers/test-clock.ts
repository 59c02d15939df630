import type { Clock } from '../../shared/clock.js';

/** A clock that runs with real time plus an offset that tests move forward. */
export interface TestClock extends Clock {
  advance(ms: number): void;
}

export function createTestClock(): TestClock {
  let offsetMs = 0;
  return {
    now: () => new Date(Date.now() + offsetMs),
    advance(ms) {
      offsetMs += ms;
    },
  };
}
