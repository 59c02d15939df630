import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Koa from 'koa';
import { createLogger } from '../../shared/logger.js';
import { serveWebApp } from '../../server/web-app/web-app.js';
import { startStack, type Stack } from '../helpers/stack.js';

describe('web app: how the web process serves it', function () {
  let stack: Stack;

  before(async () => {
    stack = await startStack({ DEFAULT_AGENT: 'searcher' });
  });
  after(() => stack?.close());

  const get = (path: string) => fetch(`${stack.url}${path}`);

  it('answers index.html with its security headers, never cached, naming DEFAULT_AGENT', async () => {
    const response = await get('/');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type')!, /^text\/html/);
    assert.equal(response.headers.get('cache-control'), 'no-cache');
    const policy = response.headers.get('content-security-policy')!;
    const scripts = /script-src ([^;]*)/.exec(policy)?.[1];
    assert.equal(scripts, "'self'", 'scripts from our origin only: no inline script, no eval');
    assert.match(policy, /frame-ancestors 'none'/);
    assert.match(policy, /object-src 'none'/);
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    const html = await response.text();
    assert.match(html, /<meta name="agentexec-default-agent" content="searcher"/);
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
  });

  it('answers index.html for the app’s own paths, so they can be loaded and reloaded', async () => {
    for (const path of ['/conversations', '/c/6f1c2a53-9d0e-4a53-8f43-5c2a0e4b7d11', '/dev/drafts/x', '/password']) {
      const response = await get(path);
      assert.equal(response.status, 200, path);
      assert.match(await response.text(), /agentexec-default-agent/, path);
    }
  });

  it('serves the hashed bundles for a year, and a missing bundle is a 404', async () => {
    const html = await (await get('/')).text();
    const script = /<script[^>]+src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    assert.ok(script, 'index.html names its bundle');
    const bundle = await get(script);
    assert.equal(bundle.status, 200);
    assert.match(bundle.headers.get('content-type')!, /javascript/);
    assert.equal(bundle.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(bundle.headers.get('x-content-type-options'), 'nosniff');
    const missing = await get('/assets/index-AAAAAAAA.js');
    assert.equal(missing.status, 404);
    assert.equal(((await missing.json()) as { error: { code: string } }).error.code, 'notFound');
  });

  it('serves a favicon as an icon, not a JSON 404', async () => {
    const icon = await get('/favicon.ico');
    assert.equal(icon.status, 200);
    assert.match(icon.headers.get('content-type')!, /^image\/(x-icon|vnd\.microsoft\.icon)/);
    const bytes = new Uint8Array(await icon.arrayBuffer());
    assert.deepEqual([...bytes.subarray(0, 4)], [0, 0, 1, 0], 'an ICO file');
    assert.match(await (await get('/')).text(), /<link rel="icon" href="\/favicon\.ico"/);
  });

  it('never answers the app for the API, the admin pages, the operations endpoints or a POST', async () => {
    for (const path of ['/api/conv/list', '/api/nothing', '/admin/nothing']) {
      const response = await get(path);
      assert.notEqual(response.status, 200, path);
      assert.match(response.headers.get('content-type')!, /application\/json/, path);
    }
    const health = await get('/healthz');
    assert.deepEqual(await health.json(), { ok: true });
    const post = await fetch(`${stack.url}/conversations`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    assert.equal(post.status, 404);
    assert.match(post.headers.get('content-type')!, /application\/json/);
  });

  it('without a built app it passes every request on (the API still answers)', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'web-app-'));
    const app = new Koa();
    app.use(serveWebApp({ root: empty, defaultAgent: 'hello', logger: createLogger('silent') }));
    app.use((ctx) => {
      ctx.status = 418;
    });
    const server = app.listen(0, '127.0.0.1');
    try {
      await new Promise((resolve) => server.once('listening', resolve));
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      assert.equal(response.status, 418);
    } finally {
      server.close();
      await rm(empty, { recursive: true });
    }
  });
});
