import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { runSandbox } from '../../workers/sandbox/run-sandbox.js';
import { compile, errorOf, makeRun, runAgent, startServer, texts, waitFor, type TestServer } from './sandbox-helpers.js';

describe('sandbox sys.fetch', () => {
  let server: TestServer;
  const held: ServerResponse[] = [];
  const closed = new WeakSet<ServerResponse>();

  before(async () => {
    server = await startServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const path = req.url ?? '/';
        if (path === '/hold') {
          res.on('close', () => closed.add(res));
          return void held.push(res);
        }
        if (path === '/redirect') return void res.writeHead(302, { location: '/elsewhere' }).end();
        if (path === '/huge') return void res.end('x'.repeat(6 * 1024 * 1024));
        res.setHeader('X-Multi', ['a', 'b']);
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ method: req.method, path, body, header: req.headers['x-probe'] ?? null }));
      });
    });
  });

  after(async () => {
    await server.close();
  });

  it('refuses 127.0.0.1 by default, without connecting', async () => {
    const hits = server.hits();
    const outcome = await runAgent(`export default async function (sys) { await sys.fetch('${server.origin}/x'); }`);
    assert.equal(outcome.resultCode, 'callFailed');
    assert.match(errorOf(outcome).message, /destination refused: 127\.0\.0\.1 is not a public address/);
    assert.equal(server.hits(), hits);
  });

  it('refuses a name that resolves to a private address (checked at lookup)', async () => {
    const hits = server.hits();
    const outcome = await runAgent(`export default async function (sys) { await sys.fetch('http://localhost:${server.port}/x'); }`);
    assert.equal(outcome.resultCode, 'callFailed');
    assert.match(errorOf(outcome).message, /destination refused: localhost/);
    assert.equal(server.hits(), hits);
  });

  it('refuses IPv4-mapped IPv6 loopback', async () => {
    const outcome = await runAgent(`export default async function (sys) { await sys.fetch('http://[::ffff:127.0.0.1]:${server.port}/'); }`);
    assert.equal(outcome.resultCode, 'callFailed');
    assert.match(errorOf(outcome).message, /destination refused/);
  });

  it('fetches a listed private address, with method, headers and body', async () => {
    const outcome = await runAgent(
      `export default async function (sys) {
        const res = await sys.fetch('${server.origin}/echo', { method: 'post', headers: { 'X-Probe': 'yes' }, body: 'payload' });
        sys.vars.res = { status: res.status, ok: res.ok, type: res.headers['content-type'], multi: res.headers['x-multi'], json: res.json(), text: typeof res.text };
      }`,
      { httpAllow: ['127.0.0.1'] },
    );
    assert.equal(outcome.resultCode, 'success');
    assert.deepEqual(outcome.resultCode === 'success' && outcome.vars.res, {
      status: 200,
      ok: true,
      type: 'application/json',
      multi: 'a, b',
      json: { method: 'POST', path: '/echo', body: 'payload', header: 'yes' },
      text: 'string',
    });
  });

  it('refuses a listed address on another port', async () => {
    const outcome = await runAgent(`export default async function (sys) { await sys.fetch('${server.origin}/'); }`, {
      httpAllow: [`127.0.0.1:${server.port + 1}`],
    });
    assert.equal(outcome.resultCode, 'callFailed');
    assert.match(errorOf(outcome).message, /not allowed by AGENT_HTTP_ALLOW/);
  });

  it('returns redirects instead of following them', async () => {
    const outcome = await runAgent(
      `export default async function (sys) { const r = await sys.fetch('${server.origin}/redirect'); sys.vars.r = [r.status, r.ok, r.headers.location]; }`,
      { httpAllow: ['127.0.0.1'] },
    );
    assert.deepEqual(outcome.resultCode === 'success' && outcome.vars.r, [302, false, '/elsewhere']);
  });

  it('fails a response body over 5 MiB', async () => {
    const outcome = await runAgent(`export default async function (sys) { await sys.fetch('${server.origin}/huge'); }`, {
      httpAllow: ['127.0.0.1'],
    });
    assert.equal(outcome.resultCode, 'callFailed');
    assert.match(errorOf(outcome).message, /larger than/);
  });

  it('fails non-http URLs as a call failure and bad URLs as an agent error', async () => {
    const ftp = await runAgent(`export default async function (sys) { await sys.fetch('ftp://example.com/'); }`);
    assert.equal(ftp.resultCode, 'callFailed');
    const bad = await runAgent(`export default async function (sys) { await sys.fetch('not a url'); }`);
    assert.equal(bad.resultCode, 'errorInAgent');
    assert.match(errorOf(bad).message, /^TypeError: sys\.fetch: invalid URL/);
  });

  it('throws on its own timeout, which the agent can catch', async () => {
    const outcome = await runAgent(
      `export default async function (sys) {
        try { await sys.fetch('${server.origin}/hold', { timeoutMs: 100 }); } catch (e) { sys.say(e.message); }
      }`,
      { httpAllow: ['127.0.0.1'] },
    );
    assert.equal(outcome.resultCode, 'success');
    assert.match(texts(outcome)[0] ?? '', /timed out after 100 ms/);
  });

  it('ends timedOut when a fetch outlasts the run', async () => {
    const outcome = await runAgent(`export default async function (sys) { await sys.fetch('${server.origin}/hold'); }`, {
      httpAllow: ['127.0.0.1'],
      maxRuntimeMs: 300,
    });
    assert.equal(outcome.resultCode, 'timedOut');
  });

  it('stops a pending fetch at once and closes its connection', async () => {
    const controller = new AbortController();
    const code = await compile(`export default async function (sys) { await sys.fetch('${server.origin}/hold'); }`);
    const heldBefore = held.length;
    const outcome = runSandbox(makeRun(code, { httpAllow: ['127.0.0.1'], signal: controller.signal, maxRuntimeMs: 10_000 }));
    await waitFor(() => held.length > heldBefore, 'the request to arrive');
    const abortedAt = Date.now();
    controller.abort();
    assert.equal((await outcome).resultCode, 'stopped');
    assert.ok(Date.now() - abortedAt < 100);
    await waitFor(() => closed.has(held[held.length - 1]!), 'the connection to close');
  });
});
