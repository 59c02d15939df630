import assert from 'node:assert/strict';
import { setImmediate as nextImmediate } from 'node:timers/promises';
import { loadsPerPoll, turnToLoad } from '../../workers/sandbox/load-turns.js';

/** Resolves after the event loop has polled for I/O `polls` more times (as afterIoPoll counts them). */
async function afterPolls(polls: number): Promise<void> {
  for (let i = 0; i < polls; i++) {
    await nextImmediate();
    await nextImmediate();
  }
}

/** Cold starts' turns (workers/sandbox/load-turns.ts): several light loads a poll, a load making an isolate alone. */
describe('load turns', () => {
  it('lets several loads into isolates already made go in one poll, the rest in the next', async () => {
    const taken: number[] = [];
    const all = Array.from({ length: loadsPerPoll + 3 }, (_, i) => turnToLoad(() => taken.push(i), () => true));
    assert.deepEqual(taken, [], 'none before a poll');
    await afterPolls(1);
    assert.equal(taken.length, loadsPerPoll);
    await Promise.all(all);
    assert.equal(taken.length, loadsPerPoll + 3);
  });

  it('gives a load that makes an isolate a poll of its own, and answers what its pick made', async () => {
    const taken: string[] = [];
    const heavy = turnToLoad(() => (taken.push('heavy 1'), 'isolate 1'));
    const light = turnToLoad(() => taken.push('light'), () => true);
    const heavier = turnToLoad(() => (taken.push('heavy 2'), 'isolate 2'));
    await afterPolls(1);
    assert.deepEqual(taken, ['heavy 1']);
    assert.equal(await heavy, 'isolate 1');
    await light;
    assert.deepEqual(taken, ['heavy 1', 'light']);
    assert.equal(await heavier, 'isolate 2');
  });

  it('rejects with what the pick threw, and goes on with the next', async () => {
    const failing = turnToLoad(() => {
      throw new Error('no isolate');
    });
    const next = turnToLoad(() => 'next', () => true);
    await assert.rejects(failing, /no isolate/);
    assert.equal(await next, 'next');
  });
});
