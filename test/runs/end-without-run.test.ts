import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { conversationTurnsKey, runEventsKey } from '../../shared/channels.js';
import type { RunJobData } from '../../shared/jobs.js';
import { createDb, type Db } from '../../db/database.js';
import { findExecutionResponse } from '../../db/executions.repository.js';
import { endWithoutRun, type EndWithoutRunDeps } from '../../runs/end-without-run.js';
import { readRunCounts } from '../../runs/run-metrics.js';
import { enqueueTurn } from '../../runs/turns.js';
import { testEnv } from '../helpers/test-env.js';

/** Ending a run that never ran (runs/end-without-run.ts), as the web process and the worker both do. */
describe('endWithoutRun', () => {
  const prefix = `${testEnv.QUEUE_PREFIX}-end-without-run`;
  let db: Db;
  let redis: Redis;
  let deps: EndWithoutRunDeps;

  before(() => {
    db = createDb(testEnv.DATABASE_URL!, 2);
    redis = new Redis(testEnv.REDIS_URL!);
    deps = { db, redis, config: { queuePrefix: prefix, redisShards: 1, streamReplaySeconds: 60 } };
  });
  after(async () => {
    redis.disconnect();
    await db.destroy();
  });

  const job = (extra: Partial<RunJobData> = {}): RunJobData => ({
    runId: randomUUID(),
    requestId: randomUUID(),
    events: { kind: 'log' },
    agentName: 'someAgent',
    convid: randomUUID(),
    newConversation: false,
    turn: null,
    caller: { kind: 'serviceAccount', id: randomUUID(), role: 'user', plan: 'free' },
    sealedInputs: '',
    ...extra,
  });

  const storedEvents = async (runId: string) => (await redis.lrange(runEventsKey(prefix, runId), 0, -1)).map((text) => JSON.parse(text));

  it('ends a job cancelled in the queue `stopped`: recorded, its turn left, its end published', async () => {
    const convid = randomUUID();
    const runId = randomUUID();
    const { member: turn } = await enqueueTurn(redis, prefix, convid, runId, 60_000);
    const data = job({ runId, convid, turn });
    const ended = await endWithoutRun(deps, { ending: 'cancelledInQueue', run: data });
    const expected = { resultCode: 'stopped', convid, agentName: 'someAgent', output: [], error: { message: 'the run was stopped' } };
    assert.deepEqual(ended, { response: expected, recorded: true });
    assert.deepEqual(await findExecutionResponse(db, runId), expected);
    const row = await db.selectFrom('executions').select(['result_code', 'error_message']).where('id', '=', runId).executeTakeFirstOrThrow();
    assert.deepEqual(row, { result_code: 'stopped', error_message: 'cancelled before it started' });
    assert.equal(await redis.zcard(conversationTurnsKey(prefix, convid)), 0);
    assert.deepEqual(await storedEvents(runId), [{ runId, id: 2, event: 'end', data: expected }]);
  });

  it('gives up a run with no worker answer `unexpected`: recorded once, nothing published', async () => {
    const data = job();
    const first = await endWithoutRun(deps, { ending: 'noWorkerAnswered', run: data });
    assert.equal(first.recorded, true);
    assert.deepEqual(first.response.error, { message: 'No worker answered in time.' });
    assert.equal((await endWithoutRun(deps, { ending: 'noWorkerAnswered', run: data })).recorded, false);
    assert.deepEqual(await storedEvents(data.runId), []);
  });

  it("ends a failed job `unexpected` with its reason, counted, and a draft validation's answer has the validation fields", async () => {
    const before = (await readRunCounts(redis, prefix)).unexpected ?? 0;
    const data = job({ draft: { id: randomUUID() } });
    const ended = await endWithoutRun(deps, { ending: 'jobFailed', run: data, reason: 'job stalled more than allowable limit' }, () => assert.fail('no step fails'));
    assert.equal(ended.response.resultCode, 'unexpected');
    assert.deepEqual((ended.response as Record<string, unknown>).runtimeError, { message: 'The run ended unexpectedly.', line: null, column: null, stack: '' });
    const row = await db.selectFrom('executions').select(['error_message', 'draft_id']).where('id', '=', data.runId).executeTakeFirstOrThrow();
    assert.deepEqual(row, { error_message: 'job stalled more than allowable limit', draft_id: data.draft!.id });
    assert.equal((await storedEvents(data.runId))[0]?.event, 'end');
    assert.equal((await readRunCounts(redis, prefix)).unexpected, before + 1);
  });

  it('reports a failed step and goes on when asked to (a failed job), throws it otherwise (a cancel)', async () => {
    // Nothing listens on port 1: every statement fails at once.
    const unreachable = createDb('postgres://postgres@127.0.0.1:1/nothing', 1);
    const broken = { ...deps, db: unreachable };
    try {
      const cancelled = job();
      await assert.rejects(endWithoutRun(broken, { ending: 'cancelledInQueue', run: cancelled }));
      assert.deepEqual(await storedEvents(cancelled.runId), []);
      const data = job();
      const failed: string[] = [];
      const ended = await endWithoutRun(broken, { ending: 'jobFailed', run: data, reason: 'lost' }, (step) => failed.push(step));
      assert.equal(ended.recorded, false);
      assert.deepEqual(failed, ['record']);
      assert.deepEqual((await storedEvents(data.runId)).map((e) => [e.id, e.event, e.data.resultCode]), [[2, 'end', 'unexpected']]);
    } finally {
      await unreachable.destroy();
    }
  });
});
