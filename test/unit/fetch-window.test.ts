import assert from 'node:assert/strict';
import type { Worker } from 'bullmq';
import { applyFetchWindow, fetchAheadOf, fetchChains, maxFetchChains } from '../../workers/fetch-window.js';

/** Stands for a BullMQ worker: the window only sets its concurrency (and wakes its main loop). */
function fakeWorkers(count: number): Worker[] {
  return Array.from({ length: count }, () => ({ concurrency: 1, mainLoopQueue: null }) as unknown as Worker);
}

/** The fetch window (workers/fetch-window.ts) over several BullMQ workers of one process. */
describe('fetch window', () => {
  it('has several workers take jobs side by side on a large process, one on a small one, sharing the same runs ahead', () => {
    assert.equal(fetchChains(1000), maxFetchChains);
    assert.equal(fetchChains(8), 1);
    assert.equal(fetchChains(1), 1);
    // The shards' queues share them.
    assert.equal(fetchChains(1000, 3), 2);
    assert.equal(fetchChains(1000, 2), 4);
    assert.equal(fetchChains(1000, 16), 1);
    assert.equal(fetchAheadOf(1), 8);
    assert.equal(fetchAheadOf(8), 1);
    assert.equal(fetchAheadOf(3), 3);
  });

  it('keeps each worker at its runs started plus its share ahead', () => {
    const workers = fakeWorkers(4);
    const windows = applyFetchWindow(workers, 100, 2);
    assert.deepEqual(workers.map((w) => w.concurrency), [2, 2, 2, 2]);
    assert.equal(windows[0]!.started(), undefined);
    assert.equal(windows[0]!.started(), undefined);
    assert.equal(windows[2]!.started(), undefined);
    assert.deepEqual(workers.map((w) => w.concurrency), [4, 2, 3, 2]);
    windows[0]!.ended();
    assert.deepEqual(workers.map((w) => w.concurrency), [3, 2, 3, 2]);
  });

  it('starts no more than `max` runs: one taken past it (each worker takes one at least) waits for a place', async () => {
    const workers = fakeWorkers(3);
    const windows = applyFetchWindow(workers, 2, 1);
    assert.equal(windows[0]!.started(), undefined);
    assert.equal(windows[0]!.started(), undefined);
    // Full: the others still take one job each (a BullMQ concurrency is at least 1).
    assert.deepEqual(workers.map((w) => w.concurrency), [2, 1, 1]);
    const order: string[] = [];
    const second = windows[1]!.started();
    const third = windows[2]!.started();
    assert.ok(second && third, 'over max, a run waits');
    void second.then(() => order.push('second'));
    void third.then(() => order.push('third'));
    await Promise.resolve();
    assert.deepEqual(order, []);
    windows[0]!.ended();
    await Promise.resolve();
    assert.deepEqual(order, ['second'], 'one place freed, one run started, in the order they came');
    // A parent lending its place lets the next start.
    const giveBack = windows[0]!.lend();
    await Promise.resolve();
    assert.deepEqual(order, ['second', 'third']);
    giveBack();
  });
});
