import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { post } from '../helpers/api.js';
import { createBrowser } from '../helpers/browser.js';
import { createAccount, createUser, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { waitForQueueIdle } from '../helpers/queue-idle.js';
import type { TestSmtp } from '../helpers/smtp.js';
import { startStackWithMail, type MailStack } from '../helpers/stack.js';
import { createTestClock } from '../helpers/test-clock.js';
import { waitFor } from '../helpers/wait.js';
import { runQueueName } from '../../shared/channels.js';
import { mailQueueName } from '../../shared/mail-jobs.js';
import { parseServiceAccountKey } from '../../shared/service-account-key.js';

/**
 * A connection that reports every command Redis runs from now on. (Not ioredis's `monitor()`: when a
 * busy Redis sends monitor lines in the same read as MONITOR's OK, ioredis reports an error before it
 * is in monitoring mode and `monitor()` rejects; those lines are from before we listen, so that error
 * is ignored. Any error once monitoring has begun fails the test: a line would be missing.)
 */
async function monitorRedis(url: string, onCommand: (args: string[]) => void): Promise<Redis> {
  const monitor = new Redis(url, { monitor: true, lazyConnect: false });
  let monitoring = false;
  monitor.on('error', (err: Error) => {
    if (!monitoring && err.message.startsWith('Command queue state error')) return;
    throw new Error(`the Redis monitor failed, so a command may be missing: ${err.message}`);
  });
  monitor.on('monitor', (_time: string, args: string[]) => onCommand(args));
  await new Promise<void>((resolve) => monitor.once('monitoring', resolve));
  monitoring = true;
  return monitor;
}

/**
 * Runs every sign-in flow with recognisable secrets, then searches everything the service wrote — each
 * log line (at the most verbose level), every Redis command any client sent meanwhile (job data and
 * pub/sub payloads included), and every response body — for them.
 */
describe('secrets never reach logs, Redis or responses', function () {
  this.timeout(60_000);
  const clock = createTestClock();
  let smtp: TestSmtp;
  let stack: MailStack;
  let monitor: Redis;
  const redisTraffic: string[] = [];
  const responses: string[] = [];
  const record = <T extends { body: unknown; headers: Headers }>(response: T) => {
    responses.push(JSON.stringify(response.body), JSON.stringify([...response.headers.entries()].filter(([name]) => name !== 'set-cookie')));
    return response;
  };

  before(async () => {
    stack = await startStackWithMail({ LOG_LEVEL: 'trace' }, { clock });
    smtp = stack.smtp;
    monitor = await monitorRedis(stack.config.redisUrl, (args) => redisTraffic.push(args.join(' ')));
  });
  after(async () => {
    monitor.disconnect();
    await stack.close();
  });

  /**
   * Waits until what the calls so far set off is over — no mail or run job left (their log lines and
   * Redis commands come before a job ends) — and the monitor has seen every Redis command sent until
   * then: it reports them in the order Redis ran them, so a marker sent now arrives after them all.
   */
  async function settled(): Promise<void> {
    await waitForQueueIdle(stack.config, mailQueueName);
    await waitForQueueIdle(stack.config, runQueueName);
    const marker = `settled-${randomBytes(6).toString('hex')}`;
    const client = new Redis(stack.config.redisUrl);
    try {
      await client.echo(marker);
    } finally {
      client.disconnect();
    }
    await waitFor(() => redisTraffic.some((line) => line.includes(marker)), 5000, 'the monitor to catch up');
  }

  it('for passwords, codes, keys, cookies and Authorization headers in every flow', async () => {
    const sentinel = `Sentinel${randomBytes(8).toString('hex')}`;
    const passwords = [`${sentinel}-first password`, `${sentinel}-second password`, `${sentinel}-wrong password`, `${sentinel}-agentexec`];
    const basicCredentials = randomBytes(12).toString('hex');
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
    await settled();

    const secrets: [string, string][] = [
      ...passwords.map((p, i): [string, string] => [`password ${i}`, p]),
      ['key', account.key],
      ['key secret', parseServiceAccountKey(account.key)!.secret], // base64url: may itself hold '_'
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
      // A code is 6 digits: look for it as a number of its own (timestamps are longer numbers).
      for (const oneCode of [code, secondCode]) {
        const codePattern = new RegExp(`(?<![0-9])${oneCode}(?![0-9])`);
        const withCode = lines.find((line) => codePattern.test(line));
        assert.equal(withCode, undefined, `the code appears in ${place}: ${withCode?.slice(0, 300)}`);
      }
    }
  });

  it('for agent secrets: the destination gets the value; responses, logs, Redis, journals and reports never do', async () => {
    const secret = `sk-Sentinel${randomBytes(10).toString('hex')}`;
    const seenByServer: string[] = [];
    const api = createServer((req, res) => {
      seenByServer.push(`${req.url} ${req.headers.authorization}`);
      res.end('{"ok":true}');
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    const apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    try {
      const admin = await createAccount(stack.runtime.db, 'admin');
      const caller = await createAccount(stack.runtime.db);
      const agentName = uniqueAgentName('secretive');
      await publishAgent(
        stack.runtime.db,
        agentName,
        `export default async (sys) => {
          const key = sys.secrets.API_KEY;
          console.log('using', key);
          await sys.fetch('${apiUrl}/v1?key=' + key, { headers: { authorization: 'Bearer ' + key } });
          const { go } = await sys.ask({ message: 'Go on?', inputs: [{ name: 'go', type: 'str' }] });
          await sys.fetch('http://10.255.255.1/?key=' + key, { timeoutMs: 100 });
        }`,
      );
      record(await post(stack.url, '/api/admin/setSecret', { agentName, key: 'API_KEY', value: secret }, { key: admin.key }));
      const listed = record(await post(stack.url, '/api/admin/listSecrets', { agentName }, { key: admin.key }));
      assert.deepEqual(listed.body, { agentName, keys: ['API_KEY'] });
      const refused = record(await post(stack.url, '/api/admin/listSecrets', { agentName }, { key: caller.key }));
      assert.equal(refused.status, 403);

      const paused = record(await post(stack.url, '/api/exec/execAgent', { agentName, stream: false }, { key: caller.key }));
      assert.equal(paused.body.resultCode, 'ask', JSON.stringify(paused.body));
      const stored = await sql<{ journal: unknown }>`select journal from paused_asks where convid = ${paused.body.convid}`.execute(stack.runtime.db);
      const journalText = JSON.stringify(stored.rows);
      assert.match(journalText, /key=\*{8}/, 'the journal keeps the URL with the secret masked');
      const failed = record(await post(stack.url, '/api/exec/execAgent', { agentName, convid: paused.body.convid, inputs: { go: 'yes' } }, { key: caller.key }));
      assert.equal(failed.body.resultCode, 'callFailed', JSON.stringify(failed.body));
      assert.match(failed.body.error.message, /key=\*{8}/);
      await settled();

      assert.deepEqual(seenByServer, [`/v1?key=${secret} Bearer ${secret}`], 'the API got the secret, once: the resumed run replayed its answer');
      const executions = await sql<{ row: unknown }>`select row_to_json(e) as row from executions e where convid = ${paused.body.convid}`.execute(stack.runtime.db);
      const places: [string, string[]][] = [
        ['logs', stack.logLines],
        ['Redis', redisTraffic],
        ['responses', responses],
        ['the paused journal', [journalText]],
        ['execution records', executions.rows.map((r) => JSON.stringify(r))],
      ];
      assert.equal(executions.rows.length, 2);
      for (const [place, lines] of places) {
        const found = lines.find((line) => line.includes(secret));
        assert.equal(found, undefined, `the agent secret appears in ${place}: ${found?.slice(0, 300)}`);
      }
      const sealed = await sql<{ sealed: string }>`select sealed from agent_secrets where agent_name = ${agentName}`.execute(stack.runtime.db);
      assert.equal(sealed.rows.length, 1);
      assert.equal(sealed.rows[0]!.sealed.includes(secret), false, 'sealed at rest');
    } finally {
      api.close();
    }
  });
});
