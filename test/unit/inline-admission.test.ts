import assert from 'node:assert/strict';
import type { Clock } from '../../shared/clock.js';
import { createInlineAdmission } from '../../workers/runs/inline-admission.js';

/** A clock that stands still until moved. */
function stillClock(start = Date.UTC(2026, 0, 1)): Clock & { move(ms: number): void } {
  let at = start;
  return { now: () => new Date(at), move: (ms) => void (at += ms) };
}

const options = { queueForMs: 60_000, loadsPerSecond: 3, maxAgents: 2 };

describe('which calls a web process answers itself', () => {
  it('sends an agent that waited on an async call to the queue for queueForMs, then tries it again', () => {
    const clock = stillClock();
    const admission = createInlineAdmission(clock, options);
    assert.equal(admission.admits('fetcher'), true);
    admission.notShort('fetcher', 'waits');
    assert.equal(admission.admits('fetcher'), false);
    assert.equal(admission.admits('other'), true);
    clock.move(59_999);
    assert.equal(admission.admits('fetcher'), false);
    clock.move(1);
    assert.equal(admission.admits('fetcher'), true);
  });

  it('sends an agent that computed past its entry to the queue when it does twice in a row, not between short runs', () => {
    const clock = stillClock();
    const admission = createInlineAdmission(clock, options);
    admission.notShort('computer', 'long');
    assert.equal(admission.admits('computer'), true, 'once may be the machine');
    admission.wasShort('computer');
    admission.notShort('computer', 'long');
    assert.equal(admission.admits('computer'), true, 'a short run in between forgot the first');
    admission.notShort('computer', 'long');
    assert.equal(admission.admits('computer'), false);
    clock.move(60_000);
    assert.equal(admission.admits('computer'), true);
    admission.notShort('computer', 'long');
    assert.equal(admission.admits('computer'), true, 'tried again afresh');
  });

  it('allows loadsPerSecond context loads a second', () => {
    const clock = stillClock();
    const admission = createInlineAdmission(clock, options);
    assert.deepEqual([1, 2, 3, 4].map(() => admission.mayLoad()), [true, true, true, false]);
    clock.move(1_000);
    assert.equal(admission.mayLoad(), true);
  });

  it('remembers at most maxAgents agents, forgetting the oldest', () => {
    const admission = createInlineAdmission(stillClock(), options);
    for (const name of ['a', 'b', 'c']) admission.notShort(name, 'waits');
    assert.deepEqual(['a', 'b', 'c'].map((name) => admission.admits(name)), [true, false, false]);
  });
});
