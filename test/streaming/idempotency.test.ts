import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { sweepExpired } from '../../workers/maintenance/retention-sweep.js';
import { post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { openStream } from '../helpers/sse.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { waitFor } from '../helpers/wait.js';

describe('Idempotency-Key', () => {
  let stack: Stack;
  let account: { key: string; id: string };
  const roller = uniqueAgentName('roller');
  // Short: answered by the web process, its key's record written by its commit.
  const greeter = uniqueAgentName('greeter');
  const asker = uniqueAgentName('asker');

  before(async () => {
    stack = await startStack();
    account = await createAccount(stack.runtime.db);
    await publishAgent(stack.runtime.db, greeter, `export default (sys) => { sys.say('hello ' + Math.random()); }`);
    await publishAgent(stack.runtime.db, asker, `export default async (sys) => { const a = await sys.ask({ message: 'name? ' + Math.random(), inputs: [{ name: 'who', type: 'str' }] }); sys.say('hi ' + a.who); }`);
    await publishAgent(stack.runtime.db, roller, `export default async (sys) => { sys.say('rolled ' + Math.random()); await sys.sleep(300); sys.say('done'); }`);
  });
  after(() => stack.close());

  const call = (key: string, idempotencyKey: string, body: Record<string, unknown> = {}) =>
    post(stack.url, '/api/exec/execAgent', { agentName: roller, ...body }, { key, headers: { 'Idempotency-Key': idempotencyKey } });

  async function runsOf(accountId: string, agentName = roller): Promise<number> {
    const rows = await stack.runtime.db.selectFrom('executions').select('id').where('principal_id', '=', accountId).where('agent_name', '=', agentName).execute();
    return rows.length;
  }

  const recordsOf = async (accountId: string, keys: string[]) =>
    (await stack.runtime.db.selectFrom('idempotency_keys').select('key').where('principal_id', '=', accountId).where('key', 'in', keys).execute()).length;

  /** Runs of `agentName` that ended (`inline`: those answered by the web process, its short runs), from the log. */
  const runsEndedOf = (agentName: string, { inline = false } = {}) =>
    stack.logLines.filter((line) => {
      const entry = JSON.parse(line) as { msg?: string; agentName?: string; inline?: boolean };
      return entry.msg === 'run ended' && entry.agentName === agentName && (!inline || entry.inline === true);
    }).length;
  const shortRunsOf = (agentName: string) => runsEndedOf(agentName, { inline: true });

  it('runs once for concurrent and later retries, each getting the first call’s response', async () => {
    const before = await runsOf(account.id);
    const [a, b] = await Promise.all([call(account.key, 'order-1'), call(account.key, 'order-1')]);
    const c = await call(account.key, 'order-1');
    assert.equal(a.body.resultCode, 'success');
    assert.deepEqual(b.body, a.body);
    assert.deepEqual(c.body, a.body);
    assert.equal((await runsOf(account.id)) - before, 1, 'one run');
  });

  it('runs a short call once when its retries race it, even in one burst with other keys’ calls', async () => {
    const other = await createAccount(stack.runtime.db);
    // A run of the agent answered here first: a burst of an agent not known short is mostly queued
    // (inline-admission.ts), and one of a caller with no warm context here waits on its load.
    let warmCalls = 0;
    await waitFor(async () => {
      assert.equal((await call(other.key, `burst-warm-${(warmCalls += 1)}`, { agentName: greeter })).body.resultCode, 'success');
      return shortRunsOf(greeter) >= 1;
    }, 10_000, 'a first run answered by the web process');
    await waitFor(() => runsEndedOf(greeter) >= warmCalls, 5000, 'the first runs logged');
    const shortBefore = shortRunsOf(greeter);
    const keys = Array.from({ length: 10 }, (_, i) => `burst-${i}`);
    const callsPerKey = 4;
    const answers = await Promise.all(keys.flatMap((key) => Array.from({ length: callsPerKey }, () => call(other.key, key, { agentName: greeter }))));
    for (let k = 0; k < keys.length; k++) {
      const sameKey = answers.slice(k * callsPerKey, (k + 1) * callsPerKey);
      assert.equal(sameKey[0]!.body.resultCode, 'success');
      for (const answer of sameKey) assert.deepEqual(answer.body, sameKey[0]!.body, `every call with ${keys[k]} gets the one run's answer`);
    }
    assert.equal(new Set(answers.map((answer) => answer.body.convid)).size, keys.length, 'one conversation a key');
    assert.equal(await runsOf(other.id, greeter), keys.length + warmCalls, 'one run a key (and the first ones)');
    assert.equal(await recordsOf(other.id, keys), keys.length, 'one record a key');
    // (The log is written asynchronously.)
    await waitFor(() => shortRunsOf(greeter) > shortBefore, 5000, 'a run of the burst answered by the web process');
  });

  it('runs a short call that ends in an ask once, its retries getting the ask', async () => {
    const other = await createAccount(stack.runtime.db);
    const [first, concurrent] = await Promise.all([call(other.key, 'ask-1', { agentName: asker }), call(other.key, 'ask-1', { agentName: asker })]);
    const later = await call(other.key, 'ask-1', { agentName: asker });
    assert.equal(first.body.resultCode, 'ask');
    assert.deepEqual(concurrent.body, first.body);
    assert.deepEqual(later.body, first.body);
    assert.equal(await runsOf(other.id, asker), 1, 'one run');
    const answered = await post(stack.url, '/api/exec/execAgent', { agentName: asker, convid: first.body.convid, inputs: { who: 'Ada' } }, { key: other.key });
    assert.deepEqual(answered.body.output, [{ type: 'text', text: 'hi Ada' }], 'its pause was kept');
  });

  it('starts a new run for a key whose record is older than 24 h, and the sweep deletes such records', async () => {
    const other = await createAccount(stack.runtime.db);
    const age = (interval: string) => stack.runtime.db.updateTable('idempotency_keys').set({ created_at: sql`now() - ${interval}::interval` } as never).where('principal_id', '=', other.id).execute();
    const first = await call(other.key, 'aged', { agentName: greeter });
    await age('23 hours');
    assert.deepEqual((await call(other.key, 'aged', { agentName: greeter })).body, first.body, 'kept for 24 h');
    await age('25 hours');
    const later = await call(other.key, 'aged', { agentName: greeter });
    assert.equal(later.body.resultCode, 'success');
    assert.notEqual(later.body.convid, first.body.convid, 'a new run');
    assert.equal(await runsOf(other.id, greeter), 2);
    await age('25 hours');
    const swept = await sweepExpired(stack.runtime);
    assert.ok(swept.idempotencyKeys >= 1);
    assert.equal(await recordsOf(other.id, ['aged']), 0);
  });

  it('lets a streamed retry join the running call’s stream', async () => {
    const first = await openStream(stack.url, '/api/exec/execAgent', { agentName: roller, stream: true }, { key: account.key, headers: { 'Idempotency-Key': 'stream-1' } });
    await first.next((e) => e.event === 'part');
    const retry = await openStream(stack.url, '/api/exec/execAgent', { agentName: roller, stream: true }, { key: account.key, headers: { 'Idempotency-Key': 'stream-1' } });
    const [original, joined] = await Promise.all([first.done, retry.done]);
    assert.equal(retry.headers.get('x-run-id'), first.headers.get('x-run-id'));
    assert.deepEqual(joined.map((e) => [e.id, e.event, e.data]), original.map((e) => [e.id, e.event, e.data]));
    const unstreamed = await call(account.key, 'stream-1');
    assert.deepEqual(unstreamed.body.output, original.filter((e) => e.event === 'part').map((e) => e.data), 'and a later plain retry gets the same output');
  });

  it('sends a streamed retry only the events after its Last-Event-ID, while the run goes on and after it ended', async () => {
    const headers = { 'Idempotency-Key': 'stream-resume' };
    const first = await openStream(stack.url, '/api/exec/execAgent', { agentName: roller, stream: true }, { key: account.key, headers });
    const part = await first.next((e) => e.event === 'part');
    first.abort();
    const resumed = await openStream(stack.url, '/api/exec/execAgent', { agentName: roller, stream: true }, { key: account.key, headers: { ...headers, 'Last-Event-ID': part.id! } });
    const rest = await resumed.done;
    assert.deepEqual(
      rest.map((e) => [Number(e.id), e.event]),
      [
        [Number(part.id) + 1, 'part'],
        [Number(part.id) + 2, 'end'],
      ],
    );
    const again = await openStream(stack.url, '/api/exec/execAgent', { agentName: roller, stream: true }, { key: account.key, headers: { ...headers, 'Last-Event-ID': String(Number(part.id) + 1) } });
    assert.deepEqual((await again.done).map((e) => e.event), ['end'], 'after the end, from the kept event log');
  });

  it('keeps keys per caller, and refuses a key reused for another request or malformed', async () => {
    const mine = await call(account.key, 'shared-key');
    const other = await createAccount(stack.runtime.db);
    const theirs = await call(other.key, 'shared-key');
    assert.equal(theirs.body.resultCode, 'success');
    assert.notEqual(theirs.body.convid, mine.body.convid, 'another caller’s key is another call');

    const different = await call(account.key, 'shared-key', { inputs: { query: 'something else' } });
    assert.equal(different.status, 400);
    assert.ok(different.body.error.details.fields['Idempotency-Key']);
    const malformed = await call(account.key, 'not a key!');
    assert.equal(malformed.status, 400);
  });

  it('lets the call be cancelled by its Idempotency-Key', async () => {
    const pending = call(account.key, 'cancel-me');
    let cancelled = false;
    for (let i = 0; i < 100 && !cancelled; i++) {
      cancelled = (await post(stack.url, '/api/exec/cancel', { requestId: 'cancel-me' }, { key: account.key })).body.cancelled;
    }
    assert.ok(cancelled);
    assert.equal((await pending).body.resultCode, 'stopped');
  });
});
