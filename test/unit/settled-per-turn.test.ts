import assert from 'node:assert/strict';
import { settledPerTurn } from '../../runs/per-turn-batch.js';

/** What is asked in one turn of the event loop, answered by its batch's one outcome (runs/per-turn-batch.ts). */
describe('batches settled per turn', () => {
  it("hands a turn's items over together at the next, and answers each with the batch's outcome", async () => {
    const batches: number[][] = [];
    const ask = settledPerTurn<number, string>(async (batch) => {
      batches.push(batch);
      return `batch of ${batch.length}`;
    });
    const first = [ask(1), ask(2), ask(3)];
    assert.deepEqual(batches, [], 'nothing handed over within the turn');
    assert.deepEqual(await Promise.all(first), ['batch of 3', 'batch of 3', 'batch of 3']);
    assert.equal(await ask(4), 'batch of 1', 'a later turn is a batch of its own');
    assert.deepEqual(batches, [[1, 2, 3], [4]]);
  });

  it('rejects every item of a batch whose handling fails, thrown or rejected, and goes on with the next', async () => {
    let calls = 0;
    const ask = settledPerTurn<number, number>((batch) => {
      calls += 1;
      if (calls === 1) throw new Error('thrown');
      if (calls === 2) return Promise.reject(new Error('rejected'));
      return Promise.resolve(batch.length);
    });
    const thrown = await Promise.allSettled([ask(1), ask(2)]);
    assert.deepEqual(thrown.map((r) => r.status === 'rejected' && (r.reason as Error).message), ['thrown', 'thrown']);
    const rejected = await Promise.allSettled([ask(3)]);
    assert.deepEqual(rejected.map((r) => r.status === 'rejected' && (r.reason as Error).message), ['rejected']);
    assert.equal(await ask(4), 1);
  });
});
