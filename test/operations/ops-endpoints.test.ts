import assert from 'node:assert/strict';
import { execAgent, post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { openStream } from '../helpers/sse.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { testEnv } from '../helpers/test-env.js';
import { waitFor } from '../helpers/wait.js';

interface Scrape {
  text: string;
  /** The sample's value, or undefined when the series is not there. Labels must match exactly. */
  value(name: string, labels?: Record<string, string>): number | undefined;
}

async function scrape(stack: Stack): Promise<Scrape> {
  const response = await fetch(`${stack.url}/metrics`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const text = await response.text();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample) continue;
    const labels = [...(sample[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)].map(([, k, v]) => [k!, v!] as const);
    samples.set(seriesId(sample[1]!, Object.fromEntries(labels)), Number(sample[3]));
  }
  return { text, value: (name, labels = {}) => samples.get(seriesId(name, labels)) };
}

function seriesId(name: string, labels: Record<string, string>): string {
  return `${name}{${Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v}`).join(',')}}`;
}

function get(stack: Stack, path: string) {
  return fetch(`${stack.url}${path}`).then(async (response) => ({ status: response.status, body: await response.json() }));
}

describe('operations endpoints', () => {
  let stack: Stack;
  let key: string;
  const hello = uniqueAgentName('hello');
  const failing = uniqueAgentName('failing');
  const sleeper = uniqueAgentName('sleeper');

  before(async () => {
    stack = await startStack({ LOG_LEVEL: 'debug' });
    key = (await createAccount(stack.runtime.db)).key;
    await publishAgent(stack.runtime.db, hello, `export default async (sys) => sys.say('hello')`);
    await publishAgent(stack.runtime.db, failing, `export default async (sys) => sys.fail('no')`);
    await publishAgent(stack.runtime.db, sleeper, `export default async (sys) => { await sys.sleep(1500); sys.say('awake'); }`);
  });
  after(() => stack.close());

  it('answers /healthz without checking anything', async () => {
    assert.deepEqual(await get(stack, '/healthz'), { status: 200, body: { ok: true } });
  });

  it('answers /readyz 200 when PostgreSQL and Redis are reachable', async () => {
    assert.deepEqual(await get(stack, '/readyz'), { status: 200, body: { ok: true, checks: { postgres: 'ok', redis: 'ok' } } });
  });

  it('times the endpoint just called in the HTTP latency histogram, by route pattern and status', async () => {
    const series = { method: 'POST', route: '/api/user/getUserProfile', status: '200' };
    const before = (await scrape(stack)).value('agentexec_http_request_duration_seconds_count', series) ?? 0;
    assert.equal((await post(stack.url, '/api/user/getUserProfile', {}, { key })).status, 200);
    const after = await scrape(stack);
    assert.equal(after.value('agentexec_http_request_duration_seconds_count', series), before + 1);
    assert.ok(after.value('agentexec_http_request_duration_seconds_bucket', { ...series, le: '+Inf' })! >= 1);
    assert.match(after.text, /# TYPE agentexec_http_request_duration_seconds histogram/);
  });

  it('labels a path no route matched `unmatched`, never with the raw path', async () => {
    const series = { method: 'GET', route: 'unmatched', status: '404' };
    const before = (await scrape(stack)).value('agentexec_http_request_duration_seconds_count', series) ?? 0;
    assert.equal((await fetch(`${stack.url}/api/no-such-thing-${uniqueAgentName('x')}`)).status, 404);
    const after = await scrape(stack);
    assert.equal(after.value('agentexec_http_request_duration_seconds_count', series), before + 1);
    assert.doesNotMatch(after.text, /no-such-thing/);
  });

  it('logs each request at debug level with its request id, route and status, and no headers', async () => {
    const requestId = `ops-test-${uniqueAgentName('r')}`;
    await post(stack.url, '/api/user/getUserProfile', {}, { key, headers: { 'X-Request-Id': requestId } });
    await waitFor(() => stack.logLines.some((line) => line.includes(requestId)), 2000, 'the access log line');
    const line = JSON.parse(stack.logLines.find((l) => l.includes(requestId))!);
    assert.equal(line.msg, 'request');
    assert.equal(line.level, 20);
    assert.equal(line.route, '/api/user/getUserProfile');
    assert.equal(line.status, 200);
    assert.equal(typeof line.ms, 'number');
    assert.ok(!JSON.stringify(line).includes(key.slice(-12)), 'the key is not in the log line');
    assert.equal(line.headers, undefined);
  });

  it('counts ended runs by resultCode, cluster-wide, and their durations, within a flush of their end', async () => {
    const first = await scrape(stack);
    const success = first.value('agentexec_runs_total', { resultCode: 'success' }) ?? 0;
    const failed = first.value('agentexec_runs_total', { resultCode: 'failCommand' }) ?? 0;
    const durations = first.value('agentexec_run_duration_seconds_count') ?? 0;
    for (let i = 0; i < 3; i++) assert.equal((await execAgent(stack.url, key, { agentName: hello })).body.resultCode, 'success');
    for (let i = 0; i < 2; i++) assert.equal((await execAgent(stack.url, key, { agentName: failing })).body.resultCode, 'failCommand');

    // Each process sends what it counted every runMetricsFlushMs (1 s).
    let after!: Scrape;
    await waitFor(async () => (after = await scrape(stack)).value('agentexec_run_duration_seconds_count') === durations + 5, 5000, 'the five runs in /metrics');
    assert.equal(after.value('agentexec_runs_total', { resultCode: 'success' }), success + 3);
    assert.equal(after.value('agentexec_runs_total', { resultCode: 'failCommand' }), failed + 2);
    assert.equal(after.value('agentexec_run_duration_seconds_count'), durations + 5);
    assert.equal(after.value('agentexec_run_duration_seconds_bucket', { le: '+Inf' }), durations + 5);
    assert.ok(after.value('agentexec_run_duration_seconds_sum')! > 0);
    assert.ok(after.value('agentexec_run_duration_seconds_bucket', { le: '60' })! <= durations + 5);
    assert.match(after.text, /# TYPE agentexec_runs_total counter/);
    assert.match(after.text, /# TYPE agentexec_run_duration_seconds histogram/);
  });

  it('counts how long queued runs waited for a worker, cluster-wide (DESIGN §16)', async () => {
    const waits = (await scrape(stack)).value('agentexec_run_queue_wait_seconds_count') ?? 0;
    for (let i = 0; i < 3; i++) {
      const submitted = await post(stack.url, '/api/exec/submit', { agentName: hello, inputs: {} }, { key });
      assert.equal(submitted.status, 202);
    }
    let after!: Scrape;
    await waitFor(async () => ((after = await scrape(stack)).value('agentexec_run_queue_wait_seconds_count') ?? 0) >= waits + 3, 5000, 'the three waits in /metrics');
    assert.equal(after.value('agentexec_run_queue_wait_seconds_bucket', { le: '+Inf' }), after.value('agentexec_run_queue_wait_seconds_count'));
    assert.match(after.text, /# TYPE agentexec_run_queue_wait_seconds histogram/);
  });

  it('shows waiting, active and delayed jobs of the runs and mail queues', async () => {
    const metrics = await scrape(stack);
    for (const queue of ['runs', 'mail']) {
      for (const state of ['waiting', 'active', 'delayed']) {
        const value = metrics.value('agentexec_queue_jobs', { queue, state });
        assert.equal(typeof value, 'number', `agentexec_queue_jobs{queue="${queue}",state="${state}"}`);
        assert.ok(value! >= 0);
      }
    }
  });

  it('counts a streamed call among the open streams while it is open, and not after', async () => {
    const before = (await scrape(stack)).value('agentexec_open_streams')!;
    assert.equal(typeof before, 'number');
    const stream = await openStream(stack.url, '/api/exec/execAgent', { agentName: sleeper, stream: true }, { key });
    await stream.next((event) => event.event === 'start');
    assert.equal((await scrape(stack)).value('agentexec_open_streams'), before + 1);
    const events = await stream.done;
    assert.equal(events.at(-1)?.event, 'end');
    assert.equal(events.at(-1)?.data.resultCode, 'success');
    await waitFor(async () => (await scrape(stack)).value('agentexec_open_streams') === before, 2000, 'the stream to leave the gauge');
  });

  it('exposes no secret in /metrics', async () => {
    const { text } = await scrape(stack);
    for (const secret of [key, stack.runtime.secrets.secretsKey, stack.runtime.secrets.sessionSecret, testEnv.DATABASE_URL!, testEnv.REDIS_URL!]) {
      assert.ok(!text.includes(secret), 'a secret or connection URL is in /metrics');
    }
  });
});

describe('/readyz when Redis or PostgreSQL is unreachable', () => {
  for (const server of ['Redis', 'PostgreSQL'] as const) {
    describe(server, () => {
      let proxy: TcpProxy;
      let stack: Stack;

      before(async () => {
        const target = new URL(server === 'Redis' ? testEnv.REDIS_URL! : testEnv.DATABASE_URL!);
        proxy = await startTcpProxy(target.hostname, Number(target.port));
        const proxied = new URL(target);
        proxied.port = String(proxy.port);
        stack = await startStack(server === 'Redis' ? { REDIS_URL: proxied.toString() } : { DATABASE_URL: proxied.toString() });
      });
      after(async () => {
        await proxy.restore().catch(() => undefined);
        await stack.close();
        await proxy.close();
      });

      it('answers 503 naming it while it is down, within about a second, and 200 again when it is back', async () => {
        assert.equal((await get(stack, '/readyz')).status, 200);
        await proxy.cut();
        const started = Date.now();
        const down = await get(stack, '/readyz');
        assert.ok(Date.now() - started < 2500, `answered in ${Date.now() - started} ms`);
        const checks = server === 'Redis' ? { postgres: 'ok', redis: 'unavailable' } : { postgres: 'unavailable', redis: 'ok' };
        assert.deepEqual(down, { status: 503, body: { ok: false, checks } });
        assert.equal((await get(stack, '/healthz')).status, 200, 'liveness does not depend on it');
        assert.equal((await fetch(`${stack.url}/metrics`)).status, 200, '/metrics still answers');
        await proxy.restore();
        await waitFor(async () => (await get(stack, '/readyz')).status === 200, 15_000, '/readyz to answer 200 again');
        assert.deepEqual(await get(stack, '/readyz'), { status: 200, body: { ok: true, checks: { postgres: 'ok', redis: 'ok' } } });
      });
    });
  }
});
