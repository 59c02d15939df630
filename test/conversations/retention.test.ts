import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { findConversation } from '../../db/conversations.repository.js';
import { sweepExpired } from '../../workers/maintenance/retention-sweep.js';
import { execAgent, post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { createTestClock } from '../helpers/test-clock.js';
import { isConversationLocked, waitFor } from '../helpers/wait.js';

const day = 86_400_000;

describe('conversation retention, pinning and listing', function () {
  const clock = createTestClock();
  let stack: Stack;
  let free: string;
  let paid: string;
  const agentName = uniqueAgentName('counter');
  const asker = uniqueAgentName('asker');

  before(async () => {
    stack = await startStack({}, { clock });
    free = (await createAccount(stack.runtime.db, 'user', 'free')).key;
    paid = (await createAccount(stack.runtime.db, 'user', 'paid')).key;
    await publishAgent(stack.runtime.db, agentName, `export default async (sys) => { sys.vars.n = (sys.vars.n ?? 0) + 1; sys.say('n=' + sys.vars.n); if (sys.inputs.wait) await sys.sleep(sys.inputs.wait); }`);
    await publishAgent(stack.runtime.db, asker, `export default async (sys) => { const a = await sys.ask({ message: 'name?', inputs: [{ name: 'who', type: 'str' }] }); sys.say('hi ' + a.who); }`);
  });
  after(() => stack.close());

  const start = async (key: string, inputs: Record<string, unknown> = {}) => (await execAgent(stack.url, key, { agentName, inputs })).body.convid as string;
  const resume = async (key: string, convid: string) => (await execAgent(stack.url, key, { agentName, convid })).body;
  const pin = (key: string, convid: string, pinned: boolean) => post(stack.url, '/api/conv/pin', { convid, pinned }, { key });
  const list = async (key: string, body: Record<string, unknown> = {}) => (await post(stack.url, '/api/conv/list', body, { key })).body.conversations as { convid: string; pinned: boolean; expiresAt: string | null; lastQuery: string | null; pausedBy: string | null }[];

  it('a free conversation expires 7 days after its last use; using it restarts the period', async () => {
    const convid = await start(free);
    clock.advance(6 * day);
    assert.equal((await resume(free, convid)).resultCode, 'success');
    clock.advance(6 * day);
    assert.equal((await resume(free, convid)).resultCode, 'success', '6 days after the last use');
    clock.advance(7 * day + 1000);
    const expired = await resume(free, convid);
    assert.equal(expired.resultCode, 'unknownConversation');
    assert.ok(!(await list(free)).some((c) => c.convid === convid), 'not listed once expired');
  });

  it('a paid conversation lasts 90 days', async () => {
    const convid = await start(paid);
    clock.advance(89 * day);
    assert.equal((await resume(paid, convid)).resultCode, 'success');
    clock.advance(90 * day + 1000);
    assert.equal((await resume(paid, convid)).resultCode, 'unknownConversation');
  });

  it('a pinned conversation does not expire; unpinned, it has its full period again', async () => {
    const convid = await start(free);
    const pinned = await pin(free, convid, true);
    assert.equal(pinned.status, 200);
    assert.deepEqual(pinned.body, { convid, pinned: true });
    assert.equal((await list(free)).find((c) => c.convid === convid)?.expiresAt, null);
    clock.advance(400 * day);
    await sweepExpired(stack.runtime);
    assert.equal((await resume(free, convid)).resultCode, 'success', 'still there after 400 days and a sweep');
    assert.equal((await pin(free, convid, false)).status, 200);
    clock.advance(6 * day);
    assert.equal((await resume(free, convid)).resultCode, 'success');
    clock.advance(7 * day + 1000);
    assert.equal((await resume(free, convid)).resultCode, 'unknownConversation');
  });

  it('pin answers 404 for another caller’s, an unknown or an expired conversation, and 400 for a bad body', async () => {
    const convid = await start(free);
    const other = (await createAccount(stack.runtime.db)).key;
    assert.equal((await pin(other, convid, true)).status, 404);
    assert.equal((await pin(free, '00000000-0000-4000-8000-000000000000', true)).status, 404);
    assert.equal((await post(stack.url, '/api/conv/pin', { convid, pinned: 'yes' }, { key: free })).status, 400);
    clock.advance(8 * day);
    const expired = await pin(free, convid, true);
    assert.equal(expired.status, 404);
    assert.equal(expired.body.error.code, 'notFound');
    assert.equal((await findConversation(stack.runtime.db, convid))?.pinned, false);
  });

  it('lists only the caller’s live conversations, newest use first, with a page limit', async () => {
    const key = (await createAccount(stack.runtime.db, 'user', 'free')).key;
    const first = await start(key, { query: 'first question' });
    clock.advance(1000);
    const second = await start(key, { query: 'second question' });
    clock.advance(1000);
    const paused = (await execAgent(stack.url, key, { agentName: asker })).body.convid as string;
    const all = await list(key);
    assert.deepEqual(all.map((c) => c.convid), [paused, second, first]);
    assert.equal(all[1]!.lastQuery, 'second question');
    assert.equal(all[0]!.pausedBy, asker);
    assert.ok(all.every((c) => c.expiresAt !== null && !c.pinned));
    const page = await list(key, { limit: 2 });
    assert.equal(page.length, 2);
    assert.equal((await post(stack.url, '/api/conv/list', { limit: 0 }, { key })).status, 400);
  });

  it('the sweep deletes expired conversations in batches (pauses too), keeps the rest, and skips a conversation a call holds', async () => {
    const key = (await createAccount(stack.runtime.db, 'user', 'free')).key;
    const old = await Promise.all(Array.from({ length: 5 }, () => start(key)));
    const pausedOld = (await execAgent(stack.url, key, { agentName: asker })).body.convid as string;
    const kept = await start(key);
    await pin(key, kept, true);
    clock.advance(8 * day);
    const fresh = await start(key);
    // A call on an expired-but-locked conversation holds its row until the sweep is over: the sweep must not wait for it.
    const busy = old[0]!;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const held = stack.runtime.db.transaction().execute(async (trx) => {
      await sql`select 1 from conversations where id = ${busy} for update`.execute(trx);
      await released;
    });
    await waitFor(() => isConversationLocked(stack.runtime.db, busy), 2000, 'the row lock');
    let sweeping = true;
    const sweep = sweepExpired(stack.runtime, 2).finally(() => (sweeping = false));
    let blocked = false;
    const lockWaiters = async () =>
      (await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`.execute(stack.runtime.db)).rows[0]!.n;
    const sweepEndedOrBlocked = async () => {
      if (!sweeping) return true;
      blocked = (await lockWaiters()) > 0;
      return blocked;
    };
    await waitFor(sweepEndedOrBlocked, 20_000, 'the sweep to end, or to wait for a lock');
    release();
    const swept = await sweep;
    await held;
    assert.equal(blocked, false, 'the sweep waited for the locked row');
    assert.ok(swept.conversations >= 5, `swept ${swept.conversations}`);
    for (const convid of [...old.slice(1), pausedOld]) assert.equal(await findConversation(stack.runtime.db, convid), undefined, convid);
    const pauses = await stack.runtime.db.selectFrom('paused_asks').select('convid').where('convid', '=', pausedOld).execute();
    assert.equal(pauses.length, 0);
    assert.ok(await findConversation(stack.runtime.db, busy), 'the locked one is left for the next sweep');
    assert.ok(await findConversation(stack.runtime.db, kept), 'pinned');
    assert.ok(await findConversation(stack.runtime.db, fresh), 'in use');
    await sweepExpired(stack.runtime);
    assert.equal(await findConversation(stack.runtime.db, busy), undefined, 'the next sweep takes it');
  });
});
