import assert from 'node:assert/strict';
import http, { type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { runSandbox } from '../../workers/sandbox/run-sandbox.js';
import type { JournalEntry } from '../../workers/sandbox/sandbox.types.js';
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
        if (path === '/split') return void writeSplit(res, Buffer.from(splitText));
        if (path.startsWith('/auth')) return void res.end(JSON.stringify({ path, authorization: req.headers.authorization ?? null }));
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
    assert.match(errorOf(outcome).message, /destination refused: localhost is not a public address/);
    assert.equal(server.hits(), hits);
  });

  it('names a refused host as the agent wrote it, never the addresses it resolved to', async () => {
    for (const httpAllow of [[], ['10.9.8.7']]) {
      const outcome = await runAgent(`export default async function (sys) { await sys.fetch('http://LocalHost:${server.port}/x'); }`, { httpAllow });
      const message = errorOf(outcome).message;
      assert.match(message, /destination refused: localhost is not (a public address|allowed by AGENT_HTTP_ALLOW)$/);
      assert.doesNotMatch(message, /127\.0\.0\.1|::1/);
    }
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

  it('reads a whole answer sent in pieces cut inside characters as the text it is', async () => {
    const outcome = await runAgent(`export default async function (sys) { sys.vars.text = (await sys.fetch('${server.origin}/split')).text; }`, { httpAllow: ['127.0.0.1'] });
    assert.equal(outcome.resultCode === 'success' && outcome.vars.text, splitText);
  });

  it('sends the credentials and query of the URL', async () => {
    const outcome = await runAgent(
      `export default async function (sys) { sys.vars.r = (await sys.fetch('http://us%20er:p%40ss@127.0.0.1:${server.port}/auth?q=1#frag')).json(); }`,
      { httpAllow: ['127.0.0.1'] },
    );
    assert.deepEqual(outcome.resultCode === 'success' && outcome.vars.r, { path: '/auth?q=1', authorization: `Basic ${Buffer.from('us er:p@ss').toString('base64')}` });
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

  it('fails a header value node:http cannot send as a call failure', async () => {
    const outcome = await runAgent(`export default async function (sys) { await sys.fetch('${server.origin}/x', { headers: { 'X-Price': '5 €' } }); }`, {
      httpAllow: ['127.0.0.1'],
    });
    assert.equal(outcome.resultCode, 'callFailed');
    assert.match(errorOf(outcome).message, /Invalid character in header content/);
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

/** A loopback server that counts its connections (sockets), how many are open and the most open at once. */
interface CountingServer {
  server: http.Server;
  origin: string;
  connections: () => number;
  open: () => number;
  mostOpen: () => number;
  close: () => Promise<void>;
}

async function startCountingServer(handler: http.RequestListener): Promise<CountingServer> {
  let connections = 0;
  let open = 0;
  let mostOpen = 0;
  const sockets = new Set<Socket>();
  const server = http.createServer(handler);
  server.on('connection', (socket) => {
    connections += 1;
    open += 1;
    mostOpen = Math.max(mostOpen, open);
    sockets.add(socket);
    socket.on('close', () => {
      open -= 1;
      sockets.delete(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    open: () => open,
    mostOpen: () => mostOpen,
    close: () =>
      new Promise<void>((resolve) => {
        // Upgraded sockets are no longer the HTTP server's: closeAllConnections would miss them.
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Holds every request until none has come for `quietMs`, then answers them all with their path. A
 * run that keeps to the limit stops sending once its slots are full; one that does not opens every
 * connection while the first ones are held. (The pause only paces the server: a run that keeps to
 * the limit passes however slow the machine is.)
 */
function holdUntilQuiet(quietMs: number): http.RequestListener {
  let held: ServerResponse[] = [];
  let quiet: NodeJS.Timeout | undefined;
  const release = () => {
    for (const res of held) res.end(res.req.url);
    held = [];
  };
  return (_req, res) => {
    held.push(res);
    clearTimeout(quiet);
    quiet = setTimeout(release, quietMs);
  };
}

describe('sandbox sys.fetch limits', () => {
  const allowLoopback = { httpAllow: ['127.0.0.1'] };
  let server: CountingServer | undefined;

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('has at most 16 fetches in flight per run; the others wait their turn, in call order, and all complete', async () => {
    const total = 100;
    server = await startCountingServer(holdUntilQuiet(50));
    const outcome = await runAgent(
      `export default async function (sys) {
        const calls = [];
        for (let i = 0; i < ${total}; i++) calls.push(sys.fetch('${server.origin}/slot/' + i).then((r) => r.text));
        const texts = await Promise.all(calls);
        await sys.ask({ message: texts.join(','), inputs: [{ name: 'a', type: 'str' }] });
      }`,
      { ...allowLoopback, maxRuntimeMs: 10_000 },
    );
    assert.equal(outcome.resultCode, 'ask', JSON.stringify('error' in outcome ? outcome.error : outcome.resultCode));
    assert.equal(server.mostOpen(), 16);
    assert.equal(server.connections(), 16, 'the connections are kept alive and reused');
    const paths = Array.from({ length: total }, (_, i) => `/slot/${i}`);
    assert.equal(outcome.askInput.message, paths.join(','));
    const fetches = outcome.journal.filter((e): e is Extract<JournalEntry, { op: 'fetch' }> => e.op === 'fetch');
    assert.deepEqual(
      fetches.map((e) => [new URL(e.url).pathname, e.result?.text]),
      paths.map((path) => [path, path]),
    );
  });

  it('never starts a waiting fetch once the run has ended', async () => {
    server = await startCountingServer((req, res) => {
      if (!req.url?.startsWith('/hold')) res.end('later');
    });
    const controller = new AbortController();
    const code = await compile(
      `export default async function (sys) { await Promise.all(Array.from({ length: 20 }, (_, i) => sys.fetch('${server.origin}/hold/' + i))); }`,
    );
    const outcome = runSandbox(makeRun(code, { ...allowLoopback, signal: controller.signal, maxRuntimeMs: 10_000 }));
    await waitFor(() => server!.connections() >= 16, '16 fetches to connect');
    controller.abort();
    assert.equal((await outcome).resultCode, 'stopped');
    await waitFor(() => server!.open() === 0, 'the stopped run’s connections to close');
    // A fetch made after that has reached the server: a waiting fetch wrongly started as the run ended would have by now.
    const later = await runAgent(`export default async function (sys) { sys.say((await sys.fetch('${server.origin}/later')).text); }`, allowLoopback);
    assert.deepEqual(texts(later), ['later']);
    assert.equal(server.connections(), 17);
  });

  it('starts a waiting fetch’s own timeout when it gets its slot', async () => {
    let held: ServerResponse[] = [];
    server = await startCountingServer((req, res) => {
      if (req.url?.startsWith('/hold')) held.push(res);
      else res.end('late but in time');
    });
    const release = () => {
      for (const waiting of held) waiting.end('released');
      held = [];
    };
    const outcome = await runAgent(
      `export default async function (sys) {
        const first = Array.from({ length: 16 }, (_, i) => sys.fetch('${server.origin}/hold/' + i));
        const waiting = sys.fetch('${server.origin}/waiting', { timeoutMs: 200 });
        await sys.sleep(400);
        sys.log('slept');
        await Promise.all(first);
        sys.say((await waiting).text);
      }`,
      { ...allowLoopback, onTimeline: (entry) => entry.kind === 'log' && entry.text.includes('slept') && release() },
    );
    assert.deepEqual(texts(outcome), ['late but in time']);
  });

  it('refuses methods other than GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS before connecting', async () => {
    server = await startCountingServer((req, res) => res.end(req.method));
    for (const method of ['CONNECT', 'trace', 'Propfind']) {
      const outcome = await runAgent(
        `export default async function (sys) { await sys.fetch('${server.origin}/x', { method: '${method}', timeoutMs: 300 }); }`,
        { ...allowLoopback, maxRuntimeMs: 3000 },
      );
      assert.equal(outcome.resultCode, 'callFailed', method);
      assert.match(errorOf(outcome).message, new RegExp(`method ${method.toUpperCase()} is not allowed.*GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS`));
    }
    assert.equal(server.connections(), 0);
    const allowed = await runAgent(
      `export default async function (sys) {
        for (const method of ['get', 'Head', 'post', 'put', 'patch', 'delete', 'options']) sys.say((await sys.fetch('${server.origin}/x', { method })).text);
      }`,
      allowLoopback,
    );
    assert.deepEqual(texts(allowed), ['GET', '', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
  });

  it('fails a fetch answered by 101 Switching Protocols, not at its timeout, and closes its connection', async () => {
    server = await startCountingServer((_req, res) => res.end('plain'));
    server.server.on('upgrade', (_req, socket: Socket) => {
      socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n');
      // The socket is ours now, half-open allowed: close it when the client does.
      socket.on('end', () => socket.end()).resume();
    });
    const outcome = await runAgent(
      `export default async function (sys) {
        await sys.fetch('${server.origin}/ws', { headers: { Connection: 'Upgrade', Upgrade: 'websocket' }, timeoutMs: 3000 });
      }`,
      { ...allowLoopback, maxRuntimeMs: 6000 },
    );
    assert.equal(outcome.resultCode, 'callFailed', JSON.stringify(outcome));
    assert.match(errorOf(outcome).message, /the server switched protocols \(101\)/);
    await waitFor(() => server!.open() === 0, 'the upgraded connection to close');
  });
});

/** Text whose UTF-8 bytes writeSplit sends cut inside its two- and four-byte characters. */
const splitText = 'h\u00e9llo \u20ac \ud83c\udf89 end';

/** Writes `bytes` a few at a time, each piece after the last has gone out, so the client reads them as separate chunks. */
function writeSplit(res: ServerResponse, bytes: Buffer, at = 0): void {
  if (at >= bytes.length) return void res.end();
  res.write(bytes.subarray(at, at + 3), () => setTimeout(() => writeSplit(res, bytes, at + 3), 10));
}
