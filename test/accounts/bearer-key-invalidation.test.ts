import assert from 'node:assert/strict';
import { hashKeySecret } from '../../shared/service-account-key.js';
import { createLogger } from '../../shared/logger.js';
import { createDb } from '../../db/database.js';
import { commands } from '../../cli/commands.js';
import { post } from '../helpers/api.js';
import { createAccount } from '../helpers/fixtures.js';
import { freePort, runCli, spawnEntry, waitForOutput, type Spawned } from '../helpers/processes.js';
import { testConfig } from '../helpers/stack.js';
import { testEnv } from '../helpers/test-env.js';

/** How soon every web process must refuse a rotated or deleted key (the "short runs" issue). */
const refusalDeadlineMs = 100;

/** Bearer keys cached by each web process, dropped on every one of them by the change message. */
describe('bearer keys cached across two web processes', () => {
  const urls: string[] = [];
  const webs: Spawned[] = [];
  const db = createDb(testEnv.DATABASE_URL!, 2);

  before(async () => {
    for (let i = 0; i < 2; i++) {
      const port = String(await freePort());
      urls.push(`http://127.0.0.1:${port}`);
      webs.push(spawnEntry('cli/web.js', [], { PORT: port }));
    }
    // A web process listens once its change subscription is in place (its cache in use).
    await Promise.all(webs.map((web) => waitForOutput(web, /web listening/)));
  });
  after(async () => {
    for (const web of webs) web.child.kill('SIGKILL');
    await Promise.all(webs.map((web) => web.exited));
    await db.destroy();
  });

  // A call whose answer depends on the key alone (getUserProfile would also read the account itself).
  const call = (url: string, key: string) => post(url, '/api/conv/list', { limit: 1 }, { key });

  const statusesOf = (key: string) => Promise.all(urls.map(async (url) => (await call(url, key)).status));

  /** Runs a CLI command in this process (as `npm run cli` would), so the time it returns is known to the ms. */
  const runCommand = (name: string, values: Record<string, string>) =>
    commands[name]!.run({ config: testConfig(), db, logger: createLogger('silent'), values, positionals: [] });

  /**
   * Asks every web process with `key` until each answered `status` to a call sent within `deadlineMs`
   * of `since`; returns when the last of them was sent, in ms after `since`.
   */
  async function waitForEveryWeb(key: string, status: number, since: number, deadlineMs: number): Promise<number> {
    const pending = new Set(urls);
    let lastSent = 0;
    while (pending.size) {
      const sent = Date.now() - since;
      if (sent > deadlineMs) throw new Error(`${[...pending].join(', ')} did not answer ${status} within ${deadlineMs} ms`);
      const answers = await Promise.all([...pending].map(async (url) => [url, (await call(url, key)).status] as const));
      for (const [url, answered] of answers) if (answered === status) pending.delete(url);
      lastSent = sent;
    }
    return lastSent;
  }

  /** An account whose key both web processes have cached (proved: a new hash written behind their back is not seen). */
  async function accountCachedEverywhere(): Promise<{ name: string; key: string; id: string }> {
    const account = await createAccount(db);
    assert.deepEqual(await statusesOf(account.key), [200, 200]);
    await db.updateTable('service_accounts').set({ key_hash: hashKeySecret('not the secret') }).where('id', '=', account.id).execute();
    assert.deepEqual(await statusesOf(account.key), [200, 200], 'both answer from their cache: nothing announced the change');
    return account;
  }

  it(`refuses a rotated key on both web processes within ${refusalDeadlineMs} ms and accepts the new one`, async () => {
    const account = await accountCachedEverywhere();
    const rotated = await runCommand('service-accounts:rotate', { name: account.name });
    const rotatedAt = Date.now();
    assert.equal(rotated.warnings, undefined);
    const newKey = (rotated.json as { key: string }).key;
    const ms = await waitForEveryWeb(account.key, 401, rotatedAt, refusalDeadlineMs);
    assert.deepEqual(await statusesOf(account.key), [401, 401], `refused on both (the last within ${ms} ms)`);
    assert.deepEqual(await statusesOf(newKey), [200, 200]);
  });

  it(`refuses the key of a deleted account on both web processes within ${refusalDeadlineMs} ms`, async () => {
    const account = await accountCachedEverywhere();
    const deleted = await runCommand('service-accounts:delete', { name: account.name });
    const deletedAt = Date.now();
    assert.equal(deleted.warnings, undefined);
    await waitForEveryWeb(account.key, 401, deletedAt, refusalDeadlineMs);
    assert.deepEqual(await statusesOf(account.key), [401, 401]);
  });

  it('keeps refusing the old key through the CLI binary too: rotation and deletion announce the change', async () => {
    const account = await createAccount(db);
    assert.deepEqual(await statusesOf(account.key), [200, 200]);
    const rotated = await runCli(['service-accounts:rotate', '--name', account.name, '--json']);
    assert.equal(rotated.code, 0, rotated.output);
    assert.doesNotMatch(rotated.output, /warning/);
    await waitForEveryWeb(account.key, 401, Date.now(), refusalDeadlineMs);
    assert.deepEqual(await statusesOf(rotated.json.key), [200, 200]);
    const deleted = await runCli(['service-accounts:delete', '--name', account.name, '--json']);
    assert.equal(deleted.code, 0, deleted.output);
    await waitForEveryWeb(rotated.json.key, 401, Date.now(), refusalDeadlineMs);
  });

  it('rotates and deletes even when Redis cannot be reached, warning that the old key may work for up to 60 s', async () => {
    const account = await createAccount(db);
    assert.deepEqual(await statusesOf(account.key), [200, 200]);
    const unreachable = { REDIS_URL: `redis://127.0.0.1:${await freePort()}` };
    const rotated = await runCli(['service-accounts:rotate', '--name', account.name, '--json'], unreachable);
    assert.equal(rotated.code, 0, rotated.output);
    assert.match(rotated.output, /^warning: could not tell the web processes through Redis \(.+\); they may accept the old key for up to 60 s$/m);
    assert.ok(!rotated.output.includes(account.key.slice(20)), 'the old secret is not printed');
    assert.deepEqual(await statusesOf(rotated.json.key), [200, 200], 'the new key works at once');
    assert.deepEqual(await statusesOf(account.key), [200, 200], 'as warned: the old key is still cached');
    const deleted = await runCli(['service-accounts:delete', '--name', account.name], unreachable);
    assert.equal(deleted.code, 0, deleted.output);
    assert.match(deleted.output, /^deleted service account .+\nwarning: could not tell the web processes/m);
  });
});
