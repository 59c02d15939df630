import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { ApiResponse } from '../helpers/api.js';
import { createBrowser } from '../helpers/browser.js';
import { createUser, strongPassword } from '../helpers/fixtures.js';
import type { TestSmtp } from '../helpers/smtp.js';
import { startStack, startStackWithMail, type MailStack, type Stack } from '../helpers/stack.js';
import { testEnv } from '../helpers/test-env.js';
import { createTestClock } from '../helpers/test-clock.js';

const minute = 60_000;

describe('brute force and enumeration', function () {
  const clock = createTestClock();
  let smtp: TestSmtp;
  let stack: MailStack;

  before(async () => {
    stack = await startStackWithMail({}, { clock });
    smtp = stack.smtp;
  });
  after(() => stack.close());

  const login = (email: string, password: string, headers: Record<string, string> = {}) =>
    createBrowser(stack.url).post('/api/auth/login', { email, password }, headers);

  it('answers a wrong password, an unknown address and a user without a password identically', async () => {
    const password = strongPassword();
    const user = await createUser(stack.runtime.db, { password });
    const noPassword = await createUser(stack.runtime.db);
    const answers = [
      await login(user.email, strongPassword()),
      await login(`nobody-${Date.now()}@example.test`, password),
      await login(noPassword.email, password),
    ];
    for (const answer of answers) {
      assert.equal(answer.status, 401);
      assert.deepEqual(answer.body, { error: { code: 'invalidCredentials', message: answers[0]!.body.error.message } });
      assert.equal(answer.headers.get('set-cookie'), null);
    }
  });

  it('takes about as long for an unknown address as for a wrong password (both check a full hash)', async () => {
    const user = await createUser(stack.runtime.db, { password: strongPassword() });
    const time = async (email: string) => {
      const started = process.hrtime.bigint();
      await login(email, strongPassword());
      return Number(process.hrtime.bigint() - started) / 1e6;
    };
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 5; i++) {
      known.push(await time(user.email));
      unknown.push(await time(`nobody-${i}-${Date.now()}@example.test`));
      clock.advance(10 * minute); // keep the growing delay out of the way
    }
    const ratio = median(unknown) / median(known);
    assert.ok(ratio > 0.6 && ratio < 1.6, `unknown/known median time ratio ${ratio.toFixed(2)} (${median(unknown)} vs ${median(known)} ms)`);
  });

  it('refuses a code for an unknown address exactly like a wrong one for a known address, and about as fast', async () => {
    // Anyone can have a code mailed to any address, so a known address may have a live code or none.
    const liveCode = await createUser(stack.runtime.db);
    const noCode = await createUser(stack.runtime.db);
    await createBrowser(stack.url).post('/api/auth/emailCode', { email: liveCode.email });
    const code = await smtp.waitForCode(liveCode.email);
    const wrongCode = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
    const answers: ApiResponse[] = [];
    const time = async (email: string) => {
      const started = process.hrtime.bigint();
      answers.push(await createBrowser(stack.url).post('/api/auth/createPasswordWithEmailCode', { email, code: wrongCode, password: strongPassword() }));
      return Number(process.hrtime.bigint() - started) / 1e6;
    };
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const emails = { liveCode: () => liveCode.email, unknown: () => `nobody-${answers.length}-${Date.now()}@example.test`, noCode: () => noCode.email };
    const kinds = ['liveCode', 'unknown', 'noCode'] as const;
    const times = { liveCode: [] as number[], unknown: [] as number[], noCode: [] as number[] };
    for (let i = 0; i < 35; i++) {
      for (let k = 0; k < kinds.length; k++) {
        const kind = kinds[(i + k) % kinds.length]!; // each kind takes each place in the round in turn
        const ms = await time(emails[kind]());
        if (i >= 5) times[kind].push(ms); // the first rounds warm up
      }
    }
    const seen = ({ status, headers, body }: ApiResponse) => ({ status, body, headers: [...headers].filter(([name]) => !['date', 'x-request-id'].includes(name)) });
    for (const answer of answers) assert.deepEqual(seen(answer), seen(answers[0]!));
    assert.equal(answers[0]!.status, 400);
    assert.equal(answers[0]!.body.error.code, 'invalidCode');
    for (const known of ['liveCode', 'noCode'] as const) {
      const ratio = median(times.unknown) / median(times[known]);
      assert.ok(ratio > 0.7 && ratio < 1.43, `unknown/${known} median time ratio ${ratio.toFixed(2)} (${median(times.unknown)} vs ${median(times[known])} ms)`);
    }
  });

  it('makes each try wait longer after 5 failures in a row (429 with Retry-After), the same for unknown addresses', async () => {
    const password = strongPassword();
    const user = await createUser(stack.runtime.db, { password });
    const unknownEmail = `nobody-delay-${Date.now()}@example.test`;
    for (const email of [user.email, unknownEmail]) {
      for (let i = 0; i < 5; i++) assert.equal((await login(email, strongPassword())).status, 401);
      const waiting = await login(email, password);
      assert.equal(waiting.status, 429, 'even the right password waits');
      assert.equal(waiting.body.error.code, 'rateLimited');
      assert.equal(waiting.headers.get('retry-after'), '1');
      clock.advance(1000);
      assert.equal((await login(email, strongPassword())).status, 401, 'the 6th failure');
      const longer = await login(email, password);
      assert.equal(longer.status, 429);
      assert.equal(longer.headers.get('retry-after'), '2', 'the delay doubles');
      clock.advance(2000);
    }
    assert.equal((await login(user.email, password)).status, 200);
    assert.equal((await login(user.email, strongPassword())).status, 401, 'a success starts the count over');
    assert.equal((await login(user.email, password)).status, 200);
  });

  it('stops the password working after 100 failed logins in a row, until it is reset', async () => {
    const password = strongPassword();
    const user = await createUser(stack.runtime.db, { password });
    await sql`update users set failed_logins = 99 where id = ${user.id}`.execute(stack.runtime.db);
    assert.equal((await login(user.email, strongPassword())).status, 401);
    const row = await stack.runtime.db.selectFrom('users').select('failed_logins').where('id', '=', user.id).executeTakeFirstOrThrow();
    assert.equal(row.failed_logins, 100);
    clock.advance(10 * minute);
    const locked = await login(user.email, password);
    assert.equal(locked.status, 401, 'the right password no longer signs in');
    assert.equal(locked.body.error.code, 'invalidCredentials');

    clock.advance(10 * minute);
    await createBrowser(stack.url).post('/api/auth/emailCode', { email: user.email });
    const code = await smtp.waitForCode(user.email);
    const next = strongPassword();
    assert.equal((await createBrowser(stack.url).post('/api/auth/createPasswordWithEmailCode', { email: user.email, code, password: next })).status, 200);
    assert.equal((await login(user.email, next)).status, 200, 'a reset lifts the lock');
  });
});

describe('failed logins per client address', function () {
  const stacks: Stack[] = [];
  after(() => Promise.all(stacks.map((s) => s.close())));

  // Each with a prefix of its own: the failures other suites make from 127.0.0.1 do not count here.
  async function stackWith(env: Record<string, string>) {
    const stack = await startStack({ LOGIN_IP_MAX_FAILURES: '3', QUEUE_PREFIX: `${testEnv.QUEUE_PREFIX}-ip${stacks.length}`, ...env });
    stacks.push(stack);
    return stack;
  }
  const login = (stack: Stack, email: string, headers: Record<string, string> = {}) =>
    createBrowser(stack.url).post('/api/auth/login', { email, password: 'not the password at all' }, headers);
  const addresses = (n: number) => Array.from({ length: n }, (_, i) => `ip-${i}-${Date.now()}@example.test`);

  it('answers 429 with Retry-After once a client failed LOGIN_IP_MAX_FAILURES times, whatever the address; X-Forwarded-For is ignored', async () => {
    const stack = await stackWith({});
    const [a, b, c, d] = addresses(4);
    for (const email of [a!, b!, c!]) assert.equal((await login(stack, email, { 'X-Forwarded-For': `10.0.0.${email.length}` })).status, 401);
    const limited = await login(stack, d!, { 'X-Forwarded-For': '10.9.9.9' });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error.code, 'rateLimited');
    const retryAfter = Number(limited.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 900, `Retry-After ${retryAfter}`);
  });

  it('with TRUST_PROXY=true, counts the client named by the last X-Forwarded-For entry', async () => {
    const stack = await stackWith({ TRUST_PROXY: 'true' });
    const emails = addresses(5);
    for (const email of emails.slice(0, 3)) assert.equal((await login(stack, email, { 'X-Forwarded-For': '203.0.113.7, 198.51.100.1' })).status, 401);
    assert.equal((await login(stack, emails[3]!, { 'X-Forwarded-For': '203.0.113.7, 198.51.100.1' })).status, 429);
    assert.equal((await login(stack, emails[3]!, { 'X-Forwarded-For': '198.51.100.1, 198.51.100.2' })).status, 401, 'another client is not limited');
    assert.equal((await login(stack, emails[4]!, { 'X-Forwarded-For': '198.51.100.2, 198.51.100.1' })).status, 429, 'a forged first entry does not escape');
  });
});
