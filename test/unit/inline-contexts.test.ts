import assert from 'node:assert/strict';
import type { ContextPool } from '../../workers/sandbox/context-pool.js';
import { inlineContext } from '../../workers/sandbox/inline-contexts.js';
import type { TenancyKey } from '../../workers/sandbox/sandbox-isolate.js';

const key: TenancyKey = { code: '', agentName: 'waiter', memoryMb: 64, tenant: 'serviceAccount:1' };

/** A pool with no warm context and one being loaded for the key (another run's): what a burst's runs find. */
function busyPool(waits: number[]): ContextPool {
  return {
    take: () => undefined,
    busy: () => true,
    nextGiven: async (_key: TenancyKey, ms: number) => void waits.push(ms),
    expectLoad: () => () => undefined,
  } as unknown as ContextPool;
}

/** An inline run's context (workers/sandbox/inline-contexts.ts) while its agent's other runs are tried. */
describe('inline contexts', () => {
  it('stops waiting for a context, and loads none, once its agent is no longer tried here', async () => {
    const waits: number[] = [];
    let tried = true;
    let loads = 0;
    const entry = { mayLoad: () => true, entered: () => undefined, stillTried: () => tried };
    const pool = busyPool(waits);
    // The first wait ends with the agent sent to the queue (another of its runs waited on the host).
    pool.nextGiven = async (_key, ms) => {
      waits.push(ms);
      tried = false;
    };
    const got = await inlineContext(pool, key, entry, { load: async () => void (loads += 1), stopped: () => false });
    assert.equal(got, 'busy');
    assert.equal(waits.length, 1, 'asked again after its first wait, not at the end of inlineWaitMs');
    assert.ok(waits[0]! <= 20, `waits in slices short enough to notice (${waits[0]} ms)`);
    assert.equal(loads, 0);
  });

  it('waits for the context being loaded while its agent is still tried here', async () => {
    const waits: number[] = [];
    const pool = busyPool(waits);
    let loads = 0;
    // Busy for three waits, then free: the run loads a context of its own.
    let busyFor = 3;
    pool.busy = () => busyFor-- > 0;
    const entry = { mayLoad: () => true, entered: () => undefined, stillTried: () => true };
    await inlineContext(pool, key, entry, { load: async () => void (loads += 1), stopped: () => false });
    assert.equal(waits.length, 3);
    assert.equal(loads, 1);
  });
});
