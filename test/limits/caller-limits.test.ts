import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { AgentexecClient, RateLimitedError } from '../../clients/typescript/src/index.js';
import { post } from '../helpers/api.js';
import { createAccount, createUser, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { runCli } from '../helpers/processes.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { waitFor } from '../helpers/wait.js';
import { callerName, callerRunsKey } from '../../shared/channels.js';
import { shardsOf } from '../../shared/shards.js';

/** Limits per caller (DESIGN §16) through the HTTP API, the command line and the client. */
describe('limits per caller', () => {
  let stack: Stack;
  let adminKey: string;
  const sleeper = uniqueAgentName('sleeper');
  const quick = uniqueAgentName('quick');

  before(async () => {
    stack = await startStack({ MAX_AGENT_RUNTIME_MS: '10000' });
    adminKey = (await createAccount(stack.runtime.db, 'admin')).key;
    await publishAgent(stack.runtime.db, sleeper, `export default async (sys) => { await sys.sleep(Number(sys.inputs.ms ?? 2000)); sys.say('slept'); }`);
    await publishAgent(stack.runtime.db, quick, `export default async (sys) => { sys.say('quick'); }`);
  });
  after(() => stack.close());

  const admin = (path: string, body: unknown) => post(stack.url, `/api/admin/${path}`, body, { key: adminKey });
  const runsOf = async (accountId: string) =>
    Number((await stack.runtime.db.selectFrom('executions').select((eb) => eb.fn.countAll().as('n')).where('principal_id', '=', accountId).executeTakeFirstOrThrow()).n);

  /** Waits out the end of a minute window when fewer than `seconds` of it are left, so a test's calls share one window. */
  async function withinOneMinute(seconds = 5): Promise<void> {
    const left = 60_000 - (Date.now() % 60_000);
    if (left < seconds * 1000) await new Promise((resolve) => setTimeout(resolve, left + 50));
  }

  it('answers getLimits with the defaults from config for an account with none set', async () => {
    const account = await createAccount(stack.runtime.db);
    const res = await admin('getLimits', { name: account.name });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      account: { kind: 'serviceAccount', id: account.id, name: account.name },
      limits: { runsPerMinute: 0, runsInFlight: 5000, weight: 1 },
      defaults: ['runsPerMinute', 'runsInFlight', 'weight'],
    });
  });

  it('refuses the call past runsPerMinute with 429 rateLimited, Retry-After and the RateLimit headers, running nothing', async () => {
    const account = await createAccount(stack.runtime.db);
    const set = await admin('setLimits', { name: account.name, runsPerMinute: 2, weight: 3 });
    assert.equal(set.status, 200);
    assert.deepEqual(set.body.limits, { runsPerMinute: 2, runsInFlight: 5000, weight: 3 });
    assert.deepEqual(set.body.defaults, ['runsInFlight']);
    await withinOneMinute();
    const first = await post(stack.url, '/api/exec/execAgent', { agentName: quick }, { key: account.key });
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('ratelimit-policy'), '"minute";q=2;w=60');
    assert.match(first.headers.get('ratelimit')!, /^"minute";r=1;t=\d+$/);
    const second = await post(stack.url, '/api/exec/submit', { agentName: quick }, { key: account.key });
    assert.equal(second.status, 202);
    assert.match(second.headers.get('ratelimit')!, /^"minute";r=0;t=\d+$/);
    await waitFor(async () => (await runsOf(account.id)) === 2, 5000, 'both runs recorded');

    for (const body of [{ agentName: quick }, { agentName: quick, stream: true }]) {
      const refused = await post(stack.url, '/api/exec/execAgent', body, { key: account.key });
      assert.equal(refused.status, 429);
      assert.equal(refused.body.error.code, 'rateLimited');
      assert.equal(refused.body.details?.limit ?? refused.body.error.details.limit, 'runsPerMinute');
      const retryAfter = refused.headers.get('retry-after')!;
      assert.match(retryAfter, /^\d+$/);
      assert.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= 60, retryAfter);
      assert.equal(refused.headers.get('ratelimit-policy'), '"minute";q=2;w=60');
      assert.equal(refused.headers.get('ratelimit'), `"minute";r=0;t=${retryAfter}`);
    }
    const submitted = await post(stack.url, '/api/exec/submit', { agentName: quick }, { key: account.key });
    assert.equal(submitted.status, 429);
    // A later positive signal: another caller's run ends after the refused ones would have.
    const other = await createAccount(stack.runtime.db);
    assert.equal((await post(stack.url, '/api/exec/execAgent', { agentName: sleeper, inputs: { ms: 10 } }, { key: other.key })).status, 200);
    assert.equal(await runsOf(account.id), 2);
  });

  it('refuses a run past runsInFlight, and takes runs again once they have ended', async () => {
    const account = await createAccount(stack.runtime.db);
    assert.equal((await admin('setLimits', { name: account.name, runsInFlight: 2 })).status, 200);
    const submit = () => post(stack.url, '/api/exec/submit', { agentName: sleeper, inputs: { ms: 1500 } }, { key: account.key });
    const runs = [await submit(), await submit()];
    assert.deepEqual(runs.map((r) => r.status), [202, 202]);
    assert.equal(runs[0]!.headers.get('ratelimit'), null, 'no per-minute limit, no RateLimit header on success');
    const refused = await submit();
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, 'rateLimited');
    assert.equal(refused.body.error.details.limit, 'runsInFlight');
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.equal(refused.headers.get('ratelimit-policy'), '"inflight";q=2;qu="concurrent-requests"');
    assert.equal(refused.headers.get('ratelimit'), '"inflight";r=0;t=1');
    const inline = await post(stack.url, '/api/exec/execAgent', { agentName: quick }, { key: account.key });
    assert.equal(inline.status, 429, 'a run the web process would answer itself counts too');

    const load = await admin('callerLoad', {});
    const mine = load.body.callers.find((c: { id: string }) => c.id === account.id);
    assert.deepEqual(mine, { kind: 'serviceAccount', id: account.id, name: account.name, inFlight: 2, refusedLastMinute: 2 });

    for (const run of runs) {
      const waited = await post(stack.url, '/api/exec/wait', { runId: run.body.runId, timeoutMs: 10_000 }, { key: account.key });
      assert.equal(waited.body.response.resultCode, 'success');
    }
    const again = await post(stack.url, '/api/exec/execAgent', { agentName: quick }, { key: account.key });
    assert.equal(again.status, 200);
    assert.equal(again.body.resultCode, 'success');
    // Cancelled while queued or running: its place is given back too.
    const bg = await submit();
    assert.equal((await post(stack.url, '/api/exec/cancel', { runId: bg.body.runId }, { key: account.key })).body.cancelled, true);
    await post(stack.url, '/api/exec/wait', { runId: bg.body.runId, timeoutMs: 10_000 }, { key: account.key });
    assert.deepEqual([(await submit()).status, (await submit()).status], [202, 202]);
  });

  it('counts refusals on /metrics without a label per account', async () => {
    const text = await (await fetch(`${stack.url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('agentexec_runs_refused_by_limit_total{limit="runsInFlight"}'));
    assert.ok(line && Number(line.split(' ')[1]) >= 2, line);
    assert.ok(!/agentexec_runs_refused_by_limit_total\{[^}]*(account|caller)/.test(text));
  });

  it('refuses bad setLimits input naming the field, changing nothing', async () => {
    const account = await createAccount(stack.runtime.db);
    const user = await createUser(stack.runtime.db);
    assert.equal((await admin('setLimits', { email: user.email, runsPerMinute: 7 })).body.limits.runsPerMinute, 7);
    const before = (await admin('getLimits', { email: user.email })).body;
    const cases: [Record<string, unknown>, string][] = [
      [{ runsPerMinute: -1 }, 'runsPerMinute'],
      [{ runsInFlight: 1.5 }, 'runsInFlight'],
      [{ weight: 0 }, 'weight'],
      [{ runsPerMinute: '5' }, 'runsPerMinute'],
    ];
    for (const [change, field] of cases) {
      const res = await admin('setLimits', { email: user.email, runsPerMinute: 3, ...change });
      assert.equal(res.status, 400, JSON.stringify(change));
      assert.equal(res.body.error.code, 'invalidRequest');
      assert.ok(res.body.error.details.fields[field], JSON.stringify(res.body));
    }
    assert.deepEqual((await admin('getLimits', { email: user.email })).body, before);
    const unknown = await admin('setLimits', { name: 'no-such-account-anywhere', runsPerMinute: 1 });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'notFound');
    assert.equal((await admin('getLimits', { email: 'nobody@example.test' })).status, 404);
    assert.equal((await admin('getLimits', { name: account.name, email: user.email })).status, 400);
    const notAdmin = await post(stack.url, '/api/admin/setLimits', { name: account.name, runsPerMinute: 1 }, { key: account.key });
    assert.equal(notAdmin.status, 403);
    // Back to the default with null.
    const reset = await admin('setLimits', { email: user.email, runsPerMinute: null });
    assert.deepEqual(reset.body.limits, { runsPerMinute: 0, runsInFlight: 5000, weight: 1 });
  });

  it('sets and reads limits from the command line, refusing unknown accounts and bad numbers', async () => {
    const account = await createAccount(stack.runtime.db);
    const set = await runCli(['limits:set', '--name', account.name, '--runs-per-minute', '30', '--in-flight', '10', '--weight', '2', '--json']);
    assert.equal(set.code, 0, set.output);
    assert.deepEqual(set.json.limits, { runsPerMinute: 30, runsInFlight: 10, weight: 2 });
    const got = await runCli(['limits:get', '--name', account.name]);
    assert.equal(got.code, 0, got.output);
    assert.match(got.output, /runsPerMinute: 30\n\s+runsInFlight: 10\n\s+weight: 2/);
    const bad = await runCli(['limits:set', '--name', account.name, '--in-flight=-1', '--runs-per-minute', '1.5']);
    assert.equal(bad.code, 1);
    assert.match(bad.output, /--runs-per-minute must be a whole number/);
    assert.match(bad.output, /--in-flight must be a whole number/);
    const unknown = await runCli(['limits:set', '--name', 'no-such-account-anywhere', '--weight', '2']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.output, /no service account named no-such-account-anywhere/);
    const user = await runCli(['limits:get', '--user', 'nobody@example.test']);
    assert.equal(user.code, 1);
    assert.match(user.output, /no user with the email/);
    assert.deepEqual((await runCli(['limits:get', '--name', account.name, '--json'])).json.limits, { runsPerMinute: 30, runsInFlight: 10, weight: 2 });
  });

  it('has the client wait Retry-After and send the call again with the same Idempotency-Key', async () => {
    const account = await createAccount(stack.runtime.db);
    await admin('setLimits', { name: account.name, runsInFlight: 1 });
    const slow = await post(stack.url, '/api/exec/submit', { agentName: sleeper, inputs: { ms: 1200 } }, { key: account.key });
    assert.equal(slow.status, 202);
    const sent: (string | null)[] = [];
    const recordingFetch: typeof fetch = (input, init) => {
      sent.push(new Headers(init?.headers).get('idempotency-key'));
      return fetch(input, init);
    };
    const client = new AgentexecClient({ baseUrl: stack.url, apiKey: account.key, fetch: recordingFetch });
    const started = Date.now();
    const response = await client.run(quick);
    assert.equal(response.resultCode, 'success');
    assert.ok(sent.length >= 2, `sent ${sent.length} times`);
    assert.ok(sent.every((key) => key && key === sent[0]), 'every attempt carries the same key');
    assert.ok(Date.now() - started >= 1000, 'waited Retry-After');

    await post(stack.url, '/api/exec/submit', { agentName: sleeper, inputs: { ms: 3000 } }, { key: account.key });
    const impatient = new AgentexecClient({ baseUrl: stack.url, apiKey: account.key, maxRetries: 0 });
    await assert.rejects(impatient.run(quick), (err: unknown) => err instanceof RateLimitedError && err.retryAfter === 1 && err.code === 'rateLimited');
  });
});

describe('limits per caller over three shards (REDIS_SHARDS=3)', () => {
  let stack: Stack;
  let adminKey: string;
  const sleeper = uniqueAgentName('sleeper');

  before(async () => {
    stack = await startStack({ MAX_AGENT_RUNTIME_MS: '10000', REDIS_SHARDS: '3' });
    adminKey = (await createAccount(stack.runtime.db, 'admin')).key;
    await publishAgent(stack.runtime.db, sleeper, `export default async (sys) => { await sys.sleep(1500); sys.say('slept'); }`);
  });
  after(() => stack.close());

  it('keeps each caller’s counts on the shard its name hashes to, and callerLoad reads them all', async () => {
    const shards = shardsOf(stack.config);
    // One account on each shard.
    const accounts: Awaited<ReturnType<typeof createAccount>>[] = [];
    while (new Set(accounts.map((a) => shards.of(callerName({ kind: 'serviceAccount', id: a.id })))).size < 3) {
      const account = await createAccount(stack.runtime.db);
      const shard = shards.of(callerName({ kind: 'serviceAccount', id: account.id }));
      if (!accounts.some((a) => shards.of(callerName({ kind: 'serviceAccount', id: a.id })) === shard)) accounts.push(account);
    }
    for (const account of accounts) {
      assert.equal((await post(stack.url, '/api/admin/setLimits', { name: account.name, runsInFlight: 1 }, { key: adminKey })).status, 200);
      const submit = () => post(stack.url, '/api/exec/submit', { agentName: sleeper }, { key: account.key });
      assert.equal((await submit()).status, 202);
      assert.equal((await submit()).status, 429, 'the limit holds on the caller’s shard');
      const caller = { kind: 'serviceAccount' as const, id: account.id };
      const redis = new Redis(stack.config.redisUrl);
      try {
        assert.equal(await redis.zcard(callerRunsKey(shards.prefixOf(callerName(caller)), caller)), 1, 'its run is counted on its shard');
      } finally {
        redis.disconnect();
      }
    }
    const load = (await post(stack.url, '/api/admin/callerLoad', {}, { key: adminKey })).body.callers as { id: string; inFlight: number; refusedLastMinute: number }[];
    for (const account of accounts) {
      assert.deepEqual(load.filter((c) => c.id === account.id).map((c) => [c.inFlight, c.refusedLastMinute]), [[1, 1]]);
    }
    await waitFor(async () => {
      const after = (await post(stack.url, '/api/admin/callerLoad', {}, { key: adminKey })).body.callers as { id: string; inFlight: number }[];
      return accounts.every((account) => !after.some((c) => c.id === account.id && c.inFlight > 0));
    }, 15_000, 'every place given back on its shard when the runs end');
  });
});
