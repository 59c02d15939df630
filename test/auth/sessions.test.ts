import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { post } from '../helpers/api.js';
import { createBrowser, type Browser } from '../helpers/browser.js';
import { createAccount, createUser, strongPassword } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { createTestClock } from '../helpers/test-clock.js';

const minute = 60_000;

describe('sign-in sessions', function () {
  const clock = createTestClock();
  let stack: Stack;
  let user: { id: string; email: string };
  const password = strongPassword();

  before(async () => {
    stack = await startStack({}, { clock });
    user = await createUser(stack.runtime.db, { password, role: 'developer', plan: 'paid' });
  });
  after(() => stack.close());

  async function signIn(): Promise<Browser> {
    const browser = createBrowser(stack.url);
    const response = await browser.post('/api/auth/login', { email: user.email, password });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return browser;
  }

  const profile = (browser: Browser) => browser.post('/api/user/getUserProfile', {});

  it('login answers the user, sets an HttpOnly SameSite=Lax cookie holding a JWT, and is not cached', async () => {
    const browser = createBrowser(stack.url);
    const response = await browser.post('/api/auth/login', { email: user.email.toUpperCase(), password });
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, { user: { id: user.id, email: user.email, callName: 'Test User', role: 'developer' } });
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const [setCookie] = response.headers.getSetCookie();
    assert.match(setCookie!, /^agentexec_session=[\w-]+\.[\w-]+\.[\w-]+; Path=\/; Max-Age=43200; HttpOnly; SameSite=Lax$/);
    assert.doesNotMatch(setCookie!, /Domain|Secure/);
  });

  it('keeps only a hash of a random session id, with creation and last activity', async () => {
    const browser = await signIn();
    const jwtPayload = JSON.parse(Buffer.from(browser.cookie!.split('.')[1]!, 'base64url').toString()) as { sid: string };
    assert.ok(Buffer.from(jwtPayload.sid, 'base64url').length >= 16, 'at least 128 bits');
    const rows = await stack.runtime.db.selectFrom('sessions').selectAll().where('user_id', '=', user.id).execute();
    assert.ok(rows.length >= 1);
    assert.ok(rows.every((r) => r.token_hash !== jwtPayload.sid && !r.token_hash.includes(jwtPayload.sid)));
    assert.ok(rows.every((r) => r.created_at instanceof Date && r.last_seen_at instanceof Date));
  });

  it('getUserProfile answers the signed-in user, and a service account with its key', async () => {
    const browser = await signIn();
    const mine = await profile(browser);
    assert.deepEqual(mine.body, { kind: 'user', id: user.id, callName: 'Test User', role: 'developer', plan: 'paid', email: user.email });
    const account = await createAccount(stack.runtime.db, 'admin', 'free');
    const theirs = await post(stack.url, '/api/user/getUserProfile', {}, { key: account.key });
    assert.deepEqual(theirs.body, { kind: 'serviceAccount', id: account.id, callName: account.name, role: 'admin', plan: 'free' });
  });

  it('a cookie and a bearer key together are refused with 400; neither is 401', async () => {
    const browser = await signIn();
    const account = await createAccount(stack.runtime.db);
    const both = await browser.post('/api/user/getUserProfile', {}, { Authorization: `Bearer ${account.key}` });
    assert.equal(both.status, 400);
    assert.equal(both.body.error.code, 'invalidRequest');
    const neither = await post(stack.url, '/api/user/getUserProfile', {});
    assert.equal(neither.status, 401);
    assert.equal(neither.body.error.code, 'unauthenticated');
  });

  it('each login makes a new session and ends the one the browser had', async () => {
    const browser = await signIn();
    const first = browser.cookie!;
    await browser.post('/api/auth/login', { email: user.email, password });
    assert.notEqual(browser.cookie, first);
    assert.equal((await profile(browser)).status, 200);
    const stale = createBrowser(stack.url);
    stale.cookie = first;
    assert.equal((await profile(stale)).status, 401);
  });

  it('logout ends the session on the server: the old cookie no longer works', async () => {
    const browser = await signIn();
    const cookie = browser.cookie!;
    const out = await browser.post('/api/auth/logout', {});
    assert.equal(out.status, 200);
    assert.deepEqual(out.body, {});
    assert.match(out.headers.getSetCookie()[0]!, /^agentexec_session=; Path=\/; Max-Age=0/);
    assert.equal(browser.cookie, undefined);
    const replay = createBrowser(stack.url);
    replay.cookie = cookie;
    const refused = await profile(replay);
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error.code, 'unauthenticated');
  });

  it('ends after SESSION_IDLE_MINUTES without activity; activity keeps it going', async () => {
    const browser = await signIn();
    clock.advance(29 * minute);
    assert.equal((await profile(browser)).status, 200, 'used within the idle time');
    clock.advance(29 * minute);
    assert.equal((await profile(browser)).status, 200, 'the last call counted as activity');
    clock.advance(30 * minute + 1000);
    const ended = await profile(browser);
    assert.equal(ended.status, 401);
    assert.equal(ended.body.error.details.sessionEnded, true);
  });

  it('ends SESSION_MAX_HOURS after login however active it is', async () => {
    const browser = await signIn();
    for (let elapsed = 0; elapsed < 12 * 60 - 25; elapsed += 25) {
      clock.advance(25 * minute);
      assert.equal((await profile(browser)).status, 200);
    }
    clock.advance(26 * minute);
    assert.equal((await profile(browser)).status, 401);
  });

  it('a forged, re-signed or tampered cookie is refused', async () => {
    const browser = await signIn();
    const [header, payload, signature] = browser.cookie!.split('=')[1]!.split('.');
    const forged = createBrowser(stack.url);
    const otherPayload = Buffer.from(JSON.stringify({ sid: 'A'.repeat(43), iat: 1, exp: 9e9 })).toString('base64url');
    for (const value of [`${header}.${otherPayload}.${signature}`, `${header}.${payload}.${signature}x`, 'not-a-jwt']) {
      forged.cookie = `agentexec_session=${value}`;
      assert.equal((await profile(forged)).status, 401, value);
    }
    const none = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    forged.cookie = `agentexec_session=${none}.${payload}.`;
    assert.equal((await profile(forged)).status, 401, 'alg none');
  });

  it('a session row deleted in the database ends the session at once', async () => {
    const browser = await signIn();
    await sql`delete from sessions where user_id = ${user.id}`.execute(stack.runtime.db);
    assert.equal((await profile(browser)).status, 401);
  });
});

describe('session cookie with COOKIE_SECURE (the default)', function () {
  let stack: Stack;
  after(() => stack?.close());

  it('is named __Host-agentexec_session and marked Secure, with no Domain', async () => {
    stack = await startStack({ COOKIE_SECURE: 'true' });
    const password = strongPassword();
    const user = await createUser(stack.runtime.db, { password });
    const browser = createBrowser(stack.url);
    const response = await browser.post('/api/auth/login', { email: user.email, password });
    assert.equal(response.status, 200);
    const [setCookie] = response.headers.getSetCookie();
    assert.match(setCookie!, /^__Host-agentexec_session=[^;]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax; Secure$/);
    assert.equal((await browser.post('/api/user/getUserProfile', {})).status, 200);
    const out = await browser.post('/api/auth/logout', {});
    assert.match(out.headers.getSetCookie()[0]!, /^__Host-agentexec_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Lax; Secure$/);
  });
});
