import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Conversation } from '../../db/schema.js';
import { conversationTurnsKey } from '../../shared/channels.js';
import { createConversationTurns, enqueueTurn } from '../../runs/turns.js';
import { conversationAfterRun } from '../../workers/runs/held-conversation.js';
import { testEnv } from '../helpers/test-env.js';
import { waitFor } from '../helpers/wait.js';

/** The conversation as a hot actor: a call that ends hands what it committed to the next call waiting in the same process. */
describe('turn hand-over', () => {
  const prefix = `${testEnv.QUEUE_PREFIX}-turn-handover`;
  let redis: Redis;
  const announced: string[] = [];

  before(() => {
    redis = new Redis(testEnv.REDIS_URL!, { enableAutoPipelining: true });
  });
  after(() => redis.disconnect());

  const options = () => ({ deadline: Date.now() + 5_000, signal: new AbortController().signal, staleMs: 60_000 });

  it('gives the next call waiting here the turn with the conversation as the call before it left it; one waiting elsewhere is told to read', async () => {
    const turns = createConversationTurns<{ version: number }>(redis, () => prefix, async (convid) => announced.push(convid));
    const convid = randomUUID();
    const { member: first, first: firstArrived } = await enqueueTurn(redis, prefix, convid, randomUUID(), 60_000);
    const { member: second, first: secondArrived } = await enqueueTurn(redis, prefix, convid, randomUUID(), 60_000);
    assert.deepEqual([firstArrived, secondArrived], [true, false], 'only a call that finds nobody ahead is first');
    assert.deepEqual(await turns.wait(convid, first, options()), { kind: 'ready' });

    let queued = 0;
    const waiting = turns.wait(convid, second, { ...options(), onQueued: () => (queued += 1) });
    // The second call looks, finds the first at the head, and says it waits: then the first ends.
    await waitFor(() => queued === 1, 2_000, 'the second call to wait');
    await turns.release(convid, first, { version: 8 });
    assert.deepEqual(await waiting, { kind: 'ready', held: { version: 8 } });
    assert.equal(queued, 1);

    // A call queued here behind one whose worker is elsewhere: that worker's release announces instead.
    const elsewhere = createConversationTurns<{ version: number }>(redis, () => prefix, async (id) => announced.push(id));
    const { member: third } = await enqueueTurn(redis, prefix, convid, randomUUID(), 60_000);
    await elsewhere.release(convid, second, { version: 9 });
    assert.deepEqual(announced, [convid]);
    // Woken by the announcement (or its poll), it reads the head itself and gets no state.
    turns.wake(convid);
    assert.deepEqual(await turns.wait(convid, third, options()), { kind: 'ready' });
    await turns.release(convid, third);
  });

  it('hands the conversation early to the call behind, even one not yet at the head, and only to a call waiting here', async () => {
    const turns = createConversationTurns<{ version: number }>(redis, () => prefix, async (convid) => announced.push(convid));
    const convid = randomUUID();
    const members: string[] = [];
    for (let i = 0; i < 3; i += 1) members.push((await enqueueTurn(redis, prefix, convid, randomUUID(), 60_000)).member);
    const [head, second, third] = members as [string, string, string];
    assert.equal(await turns.successor(convid, head), second);
    // The second starts while the head still holds the turn (its commit under way): who is behind it is still known.
    assert.equal(await turns.successor(convid, second), third);
    assert.equal(await turns.successor(convid, third), undefined);
    assert.equal(await turns.handOver(convid, head, { version: 1 }, Promise.resolve(second)), false, 'nobody waits here yet');

    let queued = 0;
    const waiting = turns.wait(convid, second, { ...options(), onQueued: () => (queued += 1) });
    await waitFor(() => queued === 1, 2_000, 'the second call to wait');
    assert.equal(await turns.handOver(convid, head, { version: 2 }), true, 'asked who is next, since a call waits here');
    assert.deepEqual(await waiting, { kind: 'ready', held: { version: 2 } });
    // The head's turn ends after its commit, waking nobody: the order moves on.
    await turns.leave(convid, head);
    assert.deepEqual(await redis.zrange(conversationTurnsKey(prefix, convid), 0, -1), [second, third]);
    for (const member of [second, third]) await turns.leave(convid, member);
  });

  it('hands over the committed state with the version raised, and never a paused conversation', () => {
    const now = new Date('2026-11-24T07:00:00Z');
    const conversation = { id: 'c', version: 4, agent_vars: { a: { n: 1 } }, conv_vars: {}, history: [], last_used_at: new Date(0), pinned: false } as unknown as Conversation;
    const added = { agentName: 'a', query: 'q', resultCode: 'success' as const, at: now.toISOString() };
    const state = { agentVars: { a: { n: 2 } }, convVars: { topic: 'x' }, history: [added], added };

    const kept = conversationAfterRun(conversation, false, { state, pause: { kind: 'keep' } }, now);
    assert.deepEqual(kept?.conversation, { ...conversation, agent_vars: state.agentVars, conv_vars: state.convVars, history: state.history, last_used_at: now, version: 5 });
    assert.equal(conversationAfterRun(conversation, true, { state, pause: { kind: 'delete' } }, now)?.conversation.version, 5, 'a resumed run that ended leaves it unpaused');
    assert.equal(conversationAfterRun(conversation, false, undefined, now)?.conversation, conversation, 'a run that kept nothing leaves it as it was');
    assert.equal(conversationAfterRun(conversation, true, undefined, now), undefined, 'still paused');
    assert.equal(conversationAfterRun(conversation, true, { state, pause: { kind: 'keep' } }, now), undefined, 'still paused');
    assert.equal(conversationAfterRun(conversation, false, { state, pause: { kind: 'save', pause: {} as never } }, now), undefined, 'paused now');
  });
});
