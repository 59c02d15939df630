import assert from 'node:assert/strict';
import { createStartGate } from '../../workers/runs/start-gate.js';

/** The worker's start gate (workers/runs/start-gate.ts): `width` starts at once, the rest in fair order. */
describe('start gate', () => {
  it('lets `width` runs start at once and holds the next until one leaves', async () => {
    const gate = createStartGate(2);
    const leaveA = await gate.enter(5);
    await gate.enter(5);
    let third = false;
    const entered = gate.enter(5).then((leave) => ((third = true), leave));
    await Promise.resolve();
    assert.equal(third, false);
    assert.deepEqual(gate.load(), { starting: 2, waiting: 1 });
    leaveA();
    await entered;
    assert.equal(third, true);
    assert.deepEqual(gate.load(), { starting: 2, waiting: 0 });
  });

  it('admits the waiting runs by priority, then by arrival', async () => {
    const gate = createStartGate(1);
    const leaveFirst = await gate.enter(1);
    const order: string[] = [];
    const waiters = [
      ['flood 900', 900],
      ['flood 901', 901],
      ['other caller 1', 1],
      ['flood 902', 902],
      ['third caller 1', 1],
      ['second of other 2', 2],
    ] as const;
    const done = waiters.map(async ([name, priority]) => {
      const leave = await gate.enter(priority);
      order.push(name);
      leave();
    });
    leaveFirst();
    await Promise.all(done);
    assert.deepEqual(order, ['other caller 1', 'third caller 1', 'second of other 2', 'flood 900', 'flood 901', 'flood 902']);
  });

  it('counts a run that leaves twice once', async () => {
    const gate = createStartGate(1);
    const leave = await gate.enter(1);
    const next = gate.enter(1);
    leave();
    leave();
    await next;
    assert.deepEqual(gate.load(), { starting: 1, waiting: 0 });
  });

  it('keeps its order for a flood of 10,000', async () => {
    const gate = createStartGate(1);
    const leaveFirst = await gate.enter(0);
    const priorities = Array.from({ length: 10_000 }, (_, i) => (i * 7919) % 10_007);
    const seen: number[] = [];
    const done = priorities.map(async (priority) => {
      const leave = await gate.enter(priority);
      seen.push(priority);
      leave();
    });
    leaveFirst();
    await Promise.all(done);
    assert.deepEqual(seen, [...priorities].sort((a, b) => a - b));
  });
});
