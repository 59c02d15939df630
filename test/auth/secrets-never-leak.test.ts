import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { post } from '../helpers/api.js';
import { createBrowser } from '../helpers/browser.js';
import { createAccount, createUser, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import type { TestSmtp } from '../helpers/smtp.js';
import { startStackWithMail, type MailStack } from '../helpers/stack.js';
import { createTestClock } from '../helpers/test-clock.js';

/**
 * Runs every sign-in flow with recognisable secrets, then searches everything the service wrote — each
 * log line (at the most verbose level), every Redis command any client sent meanwhile (job data and
 * pub/sub payloads included), and every response body — for them.
 */
describe('secrets never reach logs, Redis or responses', function () {
  const clock = createTestClock();
  let smtp: TestSmtp;
  let stack: MailStack;
  let monitor: Redis;
  const redisTraffic: string[] = [];
  const responses: string[] = [];

  before(async () => {
    stack = await startStackWithMail({ LOG_LEVEL: 'trace' }, { clock });
    smtp = stack.smtp;
    monitor = await new Redis(stack.config.redisUrl).monitor();
    monitor.on('monitor', (_time: string, args: string[]) => redisTraffic.push(args.join(' ')));
  });
  after(async () => {
    monitor.disconnect();
    await stack.close();
  });

  it('for passwords, codes, keys, cookies and Authorization headers in every flow', async () => {
    const sentinel = `Sentinel${randomBytes(8).toString('hex')}`;
    const passwords = [`${sentinel}-first password`, `${sentinel}-second password`, `${sentinel}-wrong password`, `${sentinel}-agentexec`];
    const basicCredentials = randomBytes(12).toString('hex');
    const record = <T extends { body: unknown; headers: Headers }>(response: T) => {
      responses.push(JSON.stringify(response.body), JSON.stringify([...response.headers.entries()].filter(([name]) => name !== 'set-cookie')));
      return response;
    };
    const user = await createUser(stack.runtime.db);
    const agentName = uniqueAgentName('echo');
    await publishAgent(stack.runtime.db, agentName, `export default async (sys) => { sys.say('hello ' + sys.caller.kind); }`);
    const browser = createBrowser(stack.url);

    // First password with a code; a wrong code; a password against the rules.
    record(await browser.post('/api/auth/emailCode', { email: user.email }));
    record(await browser.post('/api/auth/emailCode', { email: `nobody-${randomBytes(4).toString('hex')}@example.test` }));
    const code = await smtp.waitForCode(user.email);
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
    record(await browser.post('/api/auth/createPasswordWithEmailCode', { email: user.email, code: wrong, password: passwords[0] }));
    record(await browser.post('/api/auth/createPasswordWithEmailCode', { email: user.email, code, password: passwords[3] }));
    assert.equal(record(await browser.post('/api/auth/createPasswordWithEmailCode', { email: user.email, code, password: passwords[0] })).status, 200);

    // Logins: wrong, unknown, right; cookie calls; logout; a second code.
    record(await browser.post('/api/auth/login', { email: user.email, password: passwords[2] }));
    record(await browser.post('/api/auth/login', { email: `nobody-${randomBytes(4).toString('hex')}@example.test`, password: passwords[2] }));
    assert.equal(record(await browser.post('/api/auth/login', { email: user.email, password: passwords[0] })).status, 200);
    const cookie = browser.cookie!;
    const cookieValue = cookie.split('=')[1]!;
    const sessionToken = JSON.parse(Buffer.from(cookieValue.split('.')[1]!, 'base64url').toString()).sid as string;
    record(await browser.post('/api/user/getUserProfile', {}));
    record(await browser.post('/api/exec/execAgent', { agentName }));
    record(await browser.post('/api/exec/execAgent', { agentName, stream: 'yes', password: passwords[2] }));
    record(await browser.post('/api/auth/logout', {}));
    record(await browser.post('/api/user/getUserProfile', {}));
    clock.advance(61_000);
    record(await browser.post('/api/auth/emailCode', { email: user.email }));
    const secondCode = await smtp.waitForCode(user.email, 2);
    assert.equal(record(await browser.post('/api/auth/createPasswordWithEmailCode', { email: user.email, code: secondCode, password: passwords[1] })).status, 200);
    assert.equal(record(await browser.post('/api/auth/login', { email: user.email, password: passwords[1] })).status, 200);

    // Bearer keys: good, bad, and both credentials at once.
    const account = await createAccount(stack.runtime.db);
    const badKey = `${account.key.slice(0, -6)}${sentinel.slice(0, 6)}`;
    record(await post(stack.url, '/api/exec/execAgent', { agentName }, { key: account.key }));
    record(await post(stack.url, '/api/exec/execAgent', { agentName }, { key: badKey }));
    record(await post(stack.url, '/api/user/getUserProfile', {}, { key: account.key, headers: { Cookie: cookie } }));
    record(await post(stack.url, '/api/user/getUserProfile', {}, { headers: { Authorization: `Basic ${basicCredentials}` } }));
    await new Promise((resolve) => setTimeout(resolve, 300)); // let the mail jobs and log lines settle

    const secrets: [string, string][] = [
      ...passwords.map((p, i): [string, string] => [`password ${i}`, p]),
      ['key', account.key],
      ['key secret', account.key.split('_').at(-1)!],
      ['bad key', badKey],
      ['cookie', cookieValue],
      ['session token', sessionToken],
      ['basic credentials', basicCredentials],
    ];
    const places: [string, string[]][] = [
      ['logs', stack.logLines],
      ['Redis', redisTraffic],
      ['responses', responses],
    ];
    assert.ok(stack.logLines.some((l) => l.includes('"event":"login"')), 'sign-ins are logged');
    assert.ok(redisTraffic.length > 20, 'Redis traffic was captured');
    for (const [place, lines] of places) {
      for (const [name, secret] of secrets) {
        const found = lines.find((line) => line.includes(secret));
        assert.equal(found, undefined, `the ${name} appears in ${place}: ${found?.slice(0, 300)}`);
      }
      // A code is 6 digits: look for it as a number of its own.
      // A code is 6 digits: look for it as a number of its own (timestamps are longer numbers).
      for (const oneCode of [code, secondCode]) {
        const codePattern = new RegExp(`(?<![0-9])${oneCode}(?![0-9])`);
        const withCode = lines.find((line) => codePattern.test(line));
        assert.equal(withCode, undefined, `the code appears in ${place}: ${withCode?.slice(0, 300)}`);
      }
    }
  });
});
