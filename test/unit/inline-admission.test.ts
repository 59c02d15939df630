import assert from 'node:assert/strict';
import type { Clock } from '../../shared/clock.js';
import { createInlineAdmission } from '../../workers/runs/inline-admission.js';

/** A clock that stands still until moved. */
function stillClock(start = Date.UTC(2026, 0, 1)): Clock & { move(ms: number): void } {
  let at = start;
  return { now: () => new Date(at), move: (ms) => void (at += ms) };
}

const options = { queueForMs: 60_000, loadsPerSecond: 3, maxAgents: 2, costlyEntryMs: 2, costlyRetryMs: 1_000, probesPerAgent: 2 };
const onTime = false;
const late = true;

describe('which calls a web process answers itself', () => {
  it('sends an agent that waited on an async call to the queue for queueForMs, then tries it again', () => {
    const clock = stillClock();
    const admission = createInlineAdmission(clock, options);
    assert.equal(admission.admits('fetcher', onTime), true);
    admission.notShort('fetcher', 'waits');
    assert.equal(admission.admits('fetcher', onTime), false);
    assert.equal(admission.admits('other', onTime), true);
    clock.move(59_999);
    assert.equal(admission.admits('fetcher', onTime), false);
    clock.move(1);
    assert.equal(admission.admits('fetcher', onTime), true);
  });

  it('sends an agent that computed past its entry to the queue when it does twice in a row, not between short runs', () => {
    const clock = stillClock();
    const admission = createInlineAdmission(clock, options);
    admission.notShort('computer', 'long');
    assert.equal(admission.admits('computer', onTime), true, 'once may be the machine');
    admission.wasShort('computer');
    admission.notShort('computer', 'long');
    assert.equal(admission.admits('computer', onTime), true, 'a short run in between forgot the first');
    admission.notShort('computer', 'long');
    assert.equal(admission.admits('computer', onTime), false);
    clock.move(60_000);
    assert.equal(admission.admits('computer', onTime), true);
    admission.notShort('computer', 'long');
    assert.equal(admission.admits('computer', onTime), true, 'tried again afresh');
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
    assert.deepEqual(['a', 'b', 'c'].map((name) => admission.admits(name, onTime)), [true, false, false]);
  });

  it('keeps an agent with cheap entries while late, a garbage collection now and then included', () => {
    const admission = createInlineAdmission(stillClock(), options);
    assert.equal(admission.admits('hello', late), true, 'an agent not measured yet is tried');
    for (const cpuMs of [0.05, 0.06, 0.05, 0.05, 0.06, 0.05, 0.05, 8, 0.05, 0.05]) admission.entered('hello', cpuMs);
    assert.equal(admission.admits('hello', late), true);
  });

  it('sends an agent with costly entries to the queue while late, trying one call a costlyRetryMs', () => {
    const clock = stillClock();
    const admission = createInlineAdmission(clock, options);
    for (const cpuMs of [4, 4, 4, 4, 4, 4, 4]) admission.entered('computer', cpuMs);
    assert.equal(admission.admits('computer', late), true, 'too few entries to judge');
    admission.entered('computer', 4);
    assert.equal(admission.admits('computer', onTime), true, 'on time, its cost does not matter');
    assert.equal(admission.admits('computer', late), false);
    clock.move(999);
    assert.equal(admission.admits('computer', late), false);
    clock.move(1);
    assert.equal(admission.admits('computer', late), true, 'tried again after costlyRetryMs');
    assert.equal(admission.admits('computer', late), false, 'one call, not every call');
    // Its entries became cheap: the average falls under costlyEntryMs, and it stays while late.
    for (let i = 0; i < 7; i++) admission.entered('computer', 0.1);
    assert.equal(admission.admits('computer', late), true);
  });

  it('tries probesPerAgent calls of an agent not known short at once, and sends the others to the queue meanwhile', () => {
    const admission = createInlineAdmission(stillClock(), options);
    const first = admission.tryHere('new', onTime);
    const second = admission.tryHere('new', onTime);
    assert.ok(first && second);
    assert.equal(admission.tryHere('new', onTime), undefined, 'a third waits on nothing: it goes to the queue');
    assert.ok(admission.tryHere('other', onTime), 'each agent has probes of its own');
    first();
    first();
    const third = admission.tryHere('new', onTime);
    assert.ok(third, 'a probe over makes room for one more, once');
    assert.equal(admission.tryHere('new', onTime), undefined);
  });

  it('tries every call of an agent once one of its runs was answered here, until it is sent to the queue', () => {
    const clock = stillClock();
    const admission = createInlineAdmission(clock, options);
    const probe = admission.tryHere('hello', onTime);
    assert.ok(probe);
    admission.wasShort('hello');
    const tries = [1, 2, 3, 4].map(() => admission.tryHere('hello', onTime));
    assert.ok(tries.every((end) => end !== undefined), 'known short: no limit');
    probe();
    admission.notShort('hello', 'waits');
    assert.equal(admission.tryHere('hello', onTime), undefined, 'in the queue for queueForMs');
    clock.move(60_000);
    assert.ok(admission.tryHere('hello', onTime) && admission.tryHere('hello', onTime));
    assert.equal(admission.tryHere('hello', onTime), undefined, 'back from the queue, it is probed again');
  });

  it('never tries a call the verdict or the late loop sends to the queue, and takes no probe for it', () => {
    const admission = createInlineAdmission(stillClock(), options);
    admission.notShort('fetcher', 'waits');
    assert.equal(admission.tryHere('fetcher', onTime), undefined);
    for (let i = 0; i < 8; i++) admission.entered('computer', 4);
    assert.equal(admission.tryHere('computer', late), undefined);
    assert.ok(admission.tryHere('computer', onTime) && admission.tryHere('computer', onTime), 'both probes still free');
  });
});
