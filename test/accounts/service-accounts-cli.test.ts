import assert from 'node:assert/strict';
import { writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { findServiceAccountByName } from '../../db/service-accounts.repository.js';
import { findUserByEmail } from '../../db/users.repository.js';
import { verifyPassword } from '../../shared/password-hash.js';
import { execAgent } from '../helpers/api.js';
import { runCli } from '../helpers/processes.js';
import { startStack, type Stack } from '../helpers/stack.js';

describe('command line: accounts and agents', () => {
  let stack: Stack;
  let dir: string;
  const suffix = randomBytes(4).toString('hex');
  const agentName = `cliHello_${suffix}`;

  before(async () => {
    stack = await startStack();
    dir = await mkdtemp(join(tmpdir(), 'agentexec-cli-'));
    await writeFile(join(dir, `${agentName}.ts`), `export default async (sys: { say(s: string): void }) => sys.say('from the cli');\n`);
    await writeFile(join(dir, 'broken.ts'), `export default async (sys) => {\n  sys.say('x'\n};\n`);
  });
  after(() => stack.close());

  it('publishes an agent from its file, named by the file name, with increasing versions', async () => {
    const first = await runCli(['agents:publish', join(dir, `${agentName}.ts`), '--json']);
    assert.equal(first.code, 0, first.output);
    assert.deepEqual(first.json, { agentName, version: 1 });
    const second = await runCli(['agents:publish', join(dir, `${agentName}.ts`), '--json']);
    assert.deepEqual(second.json, { agentName, version: 2 });
  });

  it('refuses to publish code that does not compile, printing line and column, exit 1', async () => {
    const res = await runCli(['agents:publish', join(dir, 'broken.ts')]);
    assert.equal(res.code, 1);
    assert.match(res.output, /broken\.ts:3:1: /);
  });

  it('creates a service account whose key works, shown once and stored only as a hash', async () => {
    const name = `sa-${suffix}`;
    const created = await runCli(['service-accounts:create', '--name', name, '--role', 'developer', '--plan', 'paid', '--json']);
    assert.equal(created.code, 0, created.output);
    assert.equal(created.json.name, name);
    assert.equal(created.json.role, 'developer');
    assert.match(created.json.key, /^ak_[a-z0-9]{16}_[A-Za-z0-9_-]{43}$/);
    const row = await findServiceAccountByName(stack.runtime.db, name);
    assert.ok(row && !JSON.stringify(row).includes(created.json.key.split('_').slice(2).join('_')), 'the secret is not stored');
    await runCli(['agents:publish', join(dir, `${agentName}.ts`)]);
    const ok = await execAgent(stack.url, created.json.key, { agentName });
    assert.equal(ok.body.resultCode, 'success');
    const duplicate = await runCli(['service-accounts:create', '--name', name, '--role', 'user']);
    assert.equal(duplicate.code, 1);
    assert.match(duplicate.output, /already exists/);
  });

  it('refuses the old key at once after a rotation, and every key after deletion', async () => {
    const name = `rot-${suffix}`;
    const created = await runCli(['service-accounts:create', '--name', name, '--role', 'user', '--json']);
    const oldKey = created.json.key;
    assert.equal((await execAgent(stack.url, oldKey, { agentName })).status, 200);
    const rotated = await runCli(['service-accounts:rotate', '--name', name, '--json']);
    assert.equal(rotated.code, 0, rotated.output);
    assert.notEqual(rotated.json.key, oldKey);
    assert.equal((await execAgent(stack.url, oldKey, { agentName })).status, 401);
    assert.equal((await execAgent(stack.url, rotated.json.key, { agentName })).status, 200);
    const deleted = await runCli(['service-accounts:delete', '--name', name, '--json']);
    assert.equal(deleted.code, 0);
    assert.equal((await execAgent(stack.url, rotated.json.key, { agentName })).status, 401);
  });

  it('rejects a bad role and an unknown account with a message, exit 1', async () => {
    const badRole = await runCli(['service-accounts:create', '--name', `x-${suffix}`, '--role', 'root']);
    assert.equal(badRole.code, 1);
    assert.match(badRole.output, /--role must be one of: user, developer, admin/);
    const unknown = await runCli(['service-accounts:rotate', '--name', `nobody-${suffix}`]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.output, /no service account is named/);
  });

  it('creates a user with a hashed password', async () => {
    const email = `user-${suffix}@example.com`;
    const res = await runCli(['users:create', '--email', email, '--password', 'a long enough passphrase', '--role', 'admin', '--json']);
    assert.equal(res.code, 0, res.output);
    assert.equal(res.json.email, email);
    const user = await findUserByEmail(stack.runtime.db, email);
    assert.ok(user?.password_hash?.startsWith('scrypt$'));
    assert.ok(await verifyPassword('a long enough passphrase', user!.password_hash!));
  });

  it('refuses a user password that breaks the password rules, naming them, and creates nothing', async () => {
    const email = `weak-${suffix}@example.com`;
    const res = await runCli(['users:create', '--email', email, '--password', `weak-${suffix}`]);
    assert.equal(res.code, 1);
    assert.match(res.output, /minLength: At least 15 characters/);
    assert.match(res.output, /notEmailName/);
    assert.equal(await findUserByEmail(stack.runtime.db, email), undefined);
  });

  it('prints a command’s usage with each option, whether it takes a value and what it means, for --help, exit 0', async () => {
    const help = await runCli(['users:create', '--help']);
    assert.equal(help.code, 0, help.output);
    assert.match(help.output, /^Usage: npm run cli -- users:create \[options\]/);
    assert.match(help.output, /--email EMAIL\s+the email address the user signs in with \(required\)/);
    for (const option of ['--password PASSWORD', '--role ROLE', '--plan PLAN', '--call-name NAME']) assert.ok(help.output.includes(`  ${option} `), option);
    assert.match(help.output, /--json\s+print one JSON object/, 'a boolean option, shown without a value');
    assert.doesNotMatch(help.output, /ERR_PARSE_ARGS|Unknown option/);
    assert.equal((await runCli(['agents:publish', '-h'])).output.split('\n')[0], 'Usage: npm run cli -- agents:publish [options] FILE...');
  });

  it('lists the commands, each with its line, for --help or no command, exit 0', async () => {
    for (const args of [['--help'], []]) {
      const list = await runCli(args);
      assert.equal(list.code, 0, list.output);
      assert.match(list.output, /^\s+users:create\s+creates a user/m);
      assert.match(list.output, /^\s+webhooks:deliveries\s+lists a service account's latest webhook delivery attempts/m);
    }
  });

  it('says a command is unknown, then lists the commands, exit 1', async () => {
    const res = await runCli(['users:creat', '--email', `x-${suffix}@example.com`]);
    assert.equal(res.code, 1);
    assert.match(res.output, /^unknown command "users:creat"\n/);
    assert.match(res.output, /^\s+users:create\s+creates a user/m);
  });

  it('names an unknown option, a missing value or a stray argument in one line, then the command’s usage, exit 1', async () => {
    const cases: [string[], string][] = [
      [['users:create', '--email', `o-${suffix}@example.com`, '--bogus'], 'users:create: unknown option --bogus'],
      [['users:create', '--email'], 'users:create: --email needs a value'],
      [['users:create', '--email', '--role', 'admin'], 'users:create: --email needs a value'],
      [['users:create', '--email', `o-${suffix}@example.com`, '--json=yes'], 'users:create: --json takes no value'],
      [['users:create', `o-${suffix}@example.com`], `users:create: unexpected argument o-${suffix}@example.com (this command takes options only)`],
      [['users:create'], 'users:create: --email is required'],
    ];
    for (const [args, line] of cases) {
      const res = await runCli(args);
      assert.equal(res.code, 1, res.output);
      assert.equal(res.output.split('\n')[0], line);
      assert.match(res.output, /\nUsage: npm run cli -- users:create \[options\]\n[^]*--email EMAIL/);
      assert.doesNotMatch(res.output, /ERR_PARSE_ARGS|\n\s+at /, 'no Node error code, no stack');
    }
    assert.equal(await findUserByEmail(stack.runtime.db, `o-${suffix}@example.com`), undefined, 'nothing created');
  });
});
