import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { post } from '../helpers/api.js';
import { createBrowser } from '../helpers/browser.js';
import { createUser, strongPassword } from '../helpers/fixtures.js';
import type { TestSmtp } from '../helpers/smtp.js';
import { waitForQueueIdle } from '../helpers/queue-idle.js';
import { startStackWithMail, type MailStack } from '../helpers/stack.js';
import { createTestClock } from '../helpers/test-clock.js';
import { mailQueueName } from '../../shared/mail-jobs.js';

const minute = 60_000;

describe('passwords set with an email code', function () {
  const clock = createTestClock();
  let smtp: TestSmtp;
  let stack: MailStack;

  before(async () => {
    stack = await startStackWithMail({}, { clock });
    smtp = stack.smtp;
  });
  after(() => stack.close());

  const browser = () => createBrowser(stack.url);
  const askCode = (email: string) => browser().post('/api/auth/emailCode', { email });
  const setPassword = (email: string, code: string, password: string) => browser().post('/api/auth/createPasswordWithEmailCode', { email, code, password });
  const login = (email: string, password: string) => browser().post('/api/auth/login', { email, password });
  /** Asks for a code and reads it from the mail (the clock moves past the one-mail-per-minute limit first). */
  async function mailedCode(email: string): Promise<string> {
    clock.advance(minute + 1000);
    const before = smtp.codesTo(email).length;
    assert.equal((await askCode(email)).status, 200);
    return smtp.waitForCode(email, before + 1);
  }
  /** Every mail job the calls so far set off has ended: a mail not received by then was never sent. */
  const mailSettled = () => waitForQueueIdle(stack.config, mailQueueName);
  const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

  it('a new user sets the first password with emailCode then createPasswordWithEmailCode, and can sign in', async () => {
    const user = await createUser(stack.runtime.db);
    const password = strongPassword();
    assert.equal((await login(user.email, password)).status, 401, 'no password yet');
    const answer = await askCode(user.email);
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, {});
    const code = await smtp.waitForCode(user.email);
    assert.match(code, /^\d{6}$/);
    const set = await setPassword(user.email, code, password);
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.deepEqual(set.body, {});
    assert.equal((await login(user.email, password)).status, 200);
  });

  it('stores the password as scrypt (N=2^17, r=8, p=1) with its parameters, never the password', async () => {
    const user = await createUser(stack.runtime.db);
    const password = strongPassword();
    assert.equal((await setPassword(user.email, await mailedCode(user.email), password)).status, 200);
    const row = await stack.runtime.db.selectFrom('users').select('password_hash').where('id', '=', user.id).executeTakeFirstOrThrow();
    assert.match(row.password_hash!, /^scrypt\$131072\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    assert.ok(!row.password_hash!.includes(password));
  });

  it('a reset ends every session of the user at once and mails a "password changed" notice', async () => {
    const password = strongPassword();
    const user = await createUser(stack.runtime.db, { password });
    const tabs = [browser(), browser()];
    for (const tab of tabs) assert.equal((await tab.post('/api/auth/login', { email: user.email, password })).status, 200);
    const mailsBefore = smtp.mailsTo(user.email).length;
    const next = strongPassword();
    assert.equal((await setPassword(user.email, await mailedCode(user.email), next)).status, 200);
    for (const tab of tabs) assert.equal((await tab.post('/api/user/getUserProfile', {})).status, 401);
    const notice = await smtp.waitForMail(user.email, mailsBefore + 2);
    assert.match(notice.subject, /password was changed/i);
    assert.equal((await login(user.email, password)).status, 401, 'the old password is gone');
    assert.equal((await login(user.email, next)).status, 200);
  });

  it('a code works once: 20 parallel submissions of the right code give exactly one success', async () => {
    const user = await createUser(stack.runtime.db);
    const code = await mailedCode(user.email);
    const answers = await Promise.all(Array.from({ length: 20 }, () => setPassword(user.email, code, strongPassword())));
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [200, ...Array<number>(19).fill(400)]);
    assert.ok(answers.filter((a) => a.status === 400).every((a) => a.body.error.code === 'invalidCode'));
    assert.equal((await setPassword(user.email, code, strongPassword())).status, 400, 'and not again later');
  });

  it('is stored only as a keyed hash, and its mail waits in the outbox sealed', async () => {
    const user = await createUser(stack.runtime.db);
    const code = await mailedCode(user.email);
    const row = await stack.runtime.db.selectFrom('email_codes').selectAll().where('user_id', '=', user.id).executeTakeFirstOrThrow();
    assert.ok(!row.code_hash.includes(code));
    assert.notEqual(row.code_hash, createHash('sha256').update(code).digest('base64url'), 'not an unkeyed hash');
    const outbox = await stack.runtime.db.selectFrom('mail_outbox').selectAll().where('to_address', '=', user.email).execute();
    assert.ok(outbox.length > 0);
    assert.ok(outbox.every((m) => !m.sealed_body.includes(code)), 'the outbox keeps the mail sealed');
  });

  it('is bound to the address it was sent to', async () => {
    const [alice, bob] = [await createUser(stack.runtime.db), await createUser(stack.runtime.db)];
    const aliceCode = await mailedCode(alice.email);
    const refused = await setPassword(bob.email, aliceCode, strongPassword());
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.code, 'invalidCode');
    assert.equal((await setPassword(alice.email, aliceCode, strongPassword())).status, 200);
  });

  it('a new code cancels the older one', async () => {
    const user = await createUser(stack.runtime.db);
    const first = await mailedCode(user.email);
    const second = await mailedCode(user.email);
    if (first !== second) assert.equal((await setPassword(user.email, first, strongPassword())).status, 400);
    assert.equal((await setPassword(user.email, second, strongPassword())).status, 200);
  });

  it('expires after EMAIL_CODE_MINUTES', async () => {
    const user = await createUser(stack.runtime.db);
    const code = await mailedCode(user.email);
    clock.advance(10 * minute + 1000);
    const expired = await setPassword(user.email, code, strongPassword());
    assert.equal(expired.status, 400);
    assert.equal(expired.body.error.code, 'invalidCode');
    const fresh = await mailedCode(user.email);
    clock.advance(9 * minute);
    assert.equal((await setPassword(user.email, fresh, strongPassword())).status, 200, 'still valid before 10 minutes');
  });

  it('allows 5 wrong tries per code: after them even the right code is refused', async () => {
    const user = await createUser(stack.runtime.db);
    const code = await mailedCode(user.email);
    for (let i = 0; i < 5; i++) assert.equal((await setPassword(user.email, wrongCode(code), strongPassword())).status, 400);
    assert.equal((await setPassword(user.email, code, strongPassword())).status, 400);
    assert.equal((await setPassword(user.email, await mailedCode(user.email), strongPassword())).status, 200, 'a new code works');
  });

  it('allows 10 wrong tries per hour per account, which a new code does not reset', async () => {
    const user = await createUser(stack.runtime.db);
    let code = await mailedCode(user.email);
    for (let i = 0; i < 4; i++) await setPassword(user.email, wrongCode(code), strongPassword());
    code = await mailedCode(user.email);
    for (let i = 0; i < 4; i++) await setPassword(user.email, wrongCode(code), strongPassword());
    code = await mailedCode(user.email);
    for (let i = 0; i < 2; i++) await setPassword(user.email, wrongCode(code), strongPassword());
    assert.equal((await setPassword(user.email, code, strongPassword())).status, 400, 'the 10 tries of the hour are used up');
    code = await mailedCode(user.email);
    assert.equal((await setPassword(user.email, code, strongPassword())).status, 400, 'a new code does not reset them');
    clock.advance(60 * minute);
    code = await mailedCode(user.email);
    assert.equal((await setPassword(user.email, code, strongPassword())).status, 200, 'an hour later it works again');
  });

  it('mails at most one code per address per 60 seconds, and says so: 429 with the seconds left', async () => {
    const user = await createUser(stack.runtime.db);
    await mailedCode(user.email);
    const count = smtp.mailsTo(user.email).length;
    const again = await askCode(user.email);
    assert.equal(again.status, 429);
    assert.equal(again.body.error.code, 'rateLimited');
    assert.equal(again.body.error.details.retryAfterSeconds, 60);
    assert.equal(again.headers.get('retry-after'), '60');
    assert.match(again.body.error.message, /less than a minute ago.*ask again in 60 s/);
    clock.advance(30_000);
    const later = await askCode(user.email);
    assert.equal(later.status, 429);
    assert.equal(later.body.error.details.retryAfterSeconds, 30, 'the seconds left of the minute');
    clock.advance(31_000);
    assert.equal((await askCode(user.email)).status, 200);
    // The mail of the call after the minute arrives; none came for the two refused ones.
    await smtp.waitForMail(user.email, count + 1);
    assert.equal(smtp.mailsTo(user.email).length, count + 1, 'one mail: the refused calls mailed nothing');
  });

  it('refuses a second code within the minute alike for an unknown address, telling nothing about who has an account', async () => {
    const known = await createUser(stack.runtime.db);
    const unknownEmail = `nobody-${Date.now()}@example.test`;
    clock.advance(minute + 1000);
    assert.equal((await askCode(known.email)).status, 200);
    assert.equal((await askCode(unknownEmail)).status, 200);
    const [a, b] = [await askCode(known.email), await askCode(unknownEmail)];
    assert.equal(a.status, 429);
    assert.deepEqual(a.body, b.body);
  });

  it('answers an unknown address exactly like a known one, and mails nothing', async () => {
    const known = await createUser(stack.runtime.db);
    clock.advance(minute + 1000);
    const unknownEmail = `nobody-${Date.now()}@example.test`;
    const [a, b] = [await askCode(known.email), await askCode(unknownEmail)];
    assert.equal(a.status, b.status);
    assert.deepEqual(a.body, b.body);
    assert.equal(a.headers.get('content-type'), b.headers.get('content-type'));
    await smtp.waitForMail(known.email);
    await mailSettled();
    assert.equal(smtp.mailsTo(unknownEmail).length, 0);
    assert.equal((await stack.runtime.db.selectFrom('mail_outbox').select('id').where('to_address', '=', unknownEmail).execute()).length, 0, 'nothing in the outbox either');
    const noUser = await setPassword(unknownEmail, '123456', strongPassword());
    assert.equal(noUser.status, 400);
    assert.equal(noUser.body.error.code, 'invalidCode');
  });

  it('refuses a password against the rules with passwordRules naming them, and keeps the code usable', async () => {
    const user = await createUser(stack.runtime.db);
    const code = await mailedCode(user.email);
    const help = await post(stack.url, '/api/auth/getPasswordHelp', {}, { headers: { Origin: stack.url } });
    const ids = (help.body.rules as { id: string }[]).map((r) => r.id);
    const localPart = user.email.split('@')[0]!;
    const cases: [string, string[]][] = [
      ['short pass 14c', ['minLength']],
      ['x'.repeat(1025), ['maxLength']],
      ['iloveyou'.padEnd(8), ['minLength', 'notCommon']],
      [`my ${localPart.toUpperCase()} passphrase`, ['notEmailName']],
      ['the agentexec passphrase', ['notProductName']],
    ];
    for (const [password, rules] of cases) {
      const refused = await setPassword(user.email, code, password);
      assert.equal(refused.status, 400, password);
      assert.equal(refused.body.error.code, 'passwordRules');
      assert.deepEqual(refused.body.error.details.rules, rules);
      for (const rule of rules) assert.ok(ids.includes(rule), `${rule} is listed by getPasswordHelp`);
    }
    assert.equal((await setPassword(user.email, code, strongPassword())).status, 200, 'the code survived the refusals');
  });

  it('counts code points, allows long passwords whole, normalises to NFC, and composition is free', async () => {
    const user = await createUser(stack.runtime.db);
    const emoji = '🔑'.repeat(15);
    assert.equal((await setPassword(user.email, await mailedCode(user.email), emoji)).status, 200, '15 code points (30 UTF-16 units)');
    assert.equal((await login(user.email, emoji)).status, 200);

    const long = `${'a long passphrase with spaces '.repeat(40)}end`.slice(0, 1024);
    assert.equal((await setPassword(user.email, await mailedCode(user.email), long)).status, 200, '1024 characters');
    assert.equal((await login(user.email, long)).status, 200);
    assert.equal((await login(user.email, long.slice(0, 1023))).status, 401, 'nothing truncated');

    const decomposed = 'cafe\u0301 au lait, sans sucre';
    assert.equal((await setPassword(user.email, await mailedCode(user.email), decomposed)).status, 200);
    assert.equal((await login(user.email, decomposed.normalize('NFC'))).status, 200, 'NFC and NFD forms are the same password');
  });

  it('getPasswordHelp lists the rules with their ids and the length range, without a credential', async () => {
    const help = await createBrowser(stack.url).post('/api/auth/getPasswordHelp', {});
    assert.equal(help.status, 200);
    assert.deepEqual(help.body.minLength, 15);
    assert.deepEqual(help.body.maxLength, 1024);
    assert.deepEqual(
      (help.body.rules as { id: string }[]).map((r) => r.id),
      ['minLength', 'maxLength', 'notCommon', 'notEmailName', 'notProductName'],
    );
    assert.ok((help.body.rules as { text: string }[]).every((r) => r.text.length > 5));
  });
});
