import assert from 'node:assert/strict';
import { post } from '../helpers/api.js';
import { createBrowser } from '../helpers/browser.js';
import { createAccount, createUser, publishAgent, strongPassword, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

describe('cross-site request forgery and where credentials are accepted', function () {
  let stack: Stack;
  const allowed = 'https://app.example.test';
  let user: { id: string; email: string };
  const password = strongPassword();
  let cookie: string;
  const agentName = uniqueAgentName('csrf');

  before(async () => {
    stack = await startStack({ ALLOWED_ORIGINS: `${allowed}/` });
    user = await createUser(stack.runtime.db, { password });
    await publishAgent(stack.runtime.db, agentName, `export default async function (sys) { sys.say('ran'); }`);
    const browser = createBrowser(stack.url);
    await browser.post('/api/auth/login', { email: user.email, password });
    cookie = browser.cookie!;
  });
  after(() => stack.close());

  const raw = (path: string, body: string, headers: Record<string, string>) =>
    fetch(`${stack.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as { error?: { code: string } },
    }));
  const loginBody = () => JSON.stringify({ email: user.email, password });

  it('accepts login from the own origin, by Sec-Fetch-Site or by Origin, and from ALLOWED_ORIGINS', async () => {
    assert.equal((await raw('/api/auth/login', loginBody(), { 'Sec-Fetch-Site': 'same-origin' })).status, 200);
    assert.equal((await raw('/api/auth/login', loginBody(), { Origin: stack.url })).status, 200);
    assert.equal((await raw('/api/auth/login', loginBody(), { Origin: allowed, 'Sec-Fetch-Site': 'cross-site' })).status, 200);
  });

  it('refuses login and emailCode from a foreign origin, a cross-site fetch, or with no origin at all (403)', async () => {
    const refusedHeaders: Record<string, string>[] = [
      { Origin: 'https://evil.example' },
      { Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site' },
      { 'Sec-Fetch-Site': 'same-site', Origin: 'https://sub.example.test' },
      { Origin: 'null' },
      {},
    ];
    for (const headers of refusedHeaders) {
      for (const [path, body] of [['/api/auth/login', loginBody()], ['/api/auth/emailCode', JSON.stringify({ email: user.email })]] as const) {
        const answer = await raw(path, body, headers);
        assert.equal(answer.status, 403, `${path} ${JSON.stringify(headers)}`);
        assert.equal(answer.body.error?.code, 'forbidden');
      }
    }
  });

  it('refuses a cookie-authenticated call from a foreign origin, and runs nothing', async () => {
    const answer = await raw('/api/exec/execAgent', JSON.stringify({ agentName }), { Cookie: cookie, Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site' });
    assert.equal(answer.status, 403);
    const runs = await stack.runtime.db.selectFrom('executions').select('id').where('principal_id', '=', user.id).execute();
    assert.equal(runs.length, 0);
    const own = await raw('/api/exec/execAgent', JSON.stringify({ agentName }), { Cookie: cookie, 'Sec-Fetch-Site': 'same-origin' });
    assert.equal(own.status, 200);
  });

  it('refuses a cookie-authenticated or login POST that is not application/json (415), even from the own origin', async () => {
    for (const path of ['/api/exec/execAgent', '/api/auth/login', '/api/auth/emailCode']) {
      const answer = await fetch(`${stack.url}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'text/plain', Cookie: cookie, Origin: stack.url },
        body: JSON.stringify({ agentName, email: user.email, password }),
      });
      assert.equal(answer.status, 415, path);
      assert.equal(((await answer.json()) as { error: { code: string } }).error.code, 'unsupportedMediaType');
    }
  });

  it('does not apply to bearer calls: no Origin needed', async () => {
    const account = await createAccount(stack.runtime.db);
    const answer = await post(stack.url, '/api/exec/execAgent', { agentName }, { key: account.key });
    assert.equal(answer.status, 200);
    const foreign = await post(stack.url, '/api/user/getUserProfile', {}, { key: account.key, headers: { Origin: 'https://evil.example' } });
    assert.equal(foreign.status, 200);
  });

  it('accepts a bearer key only in the Authorization header', async () => {
    const account = await createAccount(stack.runtime.db);
    const elsewhere: { path: string; headers: Record<string, string>; body: Record<string, unknown> }[] = [
      { path: `/api/user/getUserProfile?access_token=${account.key}`, headers: {}, body: {} },
      { path: `/api/user/getUserProfile?key=${account.key}`, headers: {}, body: {} },
      { path: '/api/user/getUserProfile', headers: { 'X-Api-Key': account.key }, body: {} },
      { path: '/api/user/getUserProfile', headers: { Cookie: `agentexec_session=${account.key}`, Origin: stack.url }, body: {} },
      { path: '/api/exec/execAgent', headers: {}, body: { agentName, key: account.key } },
    ];
    for (const call of elsewhere) {
      const answer = await post(stack.url, call.path, call.body, { headers: call.headers });
      assert.equal(answer.status, 401, `${call.path} ${JSON.stringify(call.headers)}`);
    }
    assert.equal((await post(stack.url, '/api/user/getUserProfile', {}, { headers: { Authorization: `Bearer ${account.key}` } })).status, 200);
  });
});
