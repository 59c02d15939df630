import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { generateWebhookSecret } from '../../shared/webhook-signature.js';
import { insertExecution } from '../../db/executions.repository.js';
import { upsertWebhook } from '../../db/webhooks.repository.js';
import { post } from '../helpers/api.js';
import { expectNoAxeViolations } from '../helpers/axe.js';
import { createAccount, createUser, strongPassword, successRecord } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';
import { signInThroughForm } from './helpers/app-actions.js';
import { openPage, saveFailureScreenshot, saveScreenshot, type WebPage } from './helpers/chromium.js';
import { assertNoPageErrors, expectHidden, expectTitle, expectVisible } from './helpers/expect.js';
import { startWebSuite, type WebSuite } from './helpers/web-suite.js';

/** The console's Accounts, Secrets, Webhooks and Reports pages (DESIGN §18), clicked through in Chromium. */
describe('web app: console accounts, secrets, webhooks, reports', function () {
  this.timeout(90_000);
  let suite: WebSuite;
  let receiver: { server: Server; port: number; url: string; webhookIds: string[] };
  const password = strongPassword();
  let admin: { id: string; email: string };
  let user: { id: string; email: string };
  const pages: WebPage[] = [];

  before(async () => {
    receiver = await startReceiver();
    suite = await startWebSuite({ WEBHOOK_ALLOW: `127.0.0.1:${receiver.port}` });
    admin = await createUser(suite.stack.runtime.db, { password, role: 'admin' });
    user = await createUser(suite.stack.runtime.db, { password, role: 'developer' });
  });
  after(async () => {
    await suite?.close();
    receiver?.server.close();
  });
  afterEach(async function () {
    await saveFailureScreenshot(this.currentTest, pages[pages.length - 1]?.page);
    for (const web of pages.splice(0)) await web.close();
  });

  async function adminPage(link: string, title: string): Promise<WebPage> {
    const web = await openPage(suite.browser, suite.stack.url);
    pages.push(web);
    await signInThroughForm(web.page, admin.email, password);
    await web.page.getByRole('link', { name: link, exact: true }).click();
    await expectTitle(web.page, `${title} — agentexec`);
    // Confirmations (rotate, delete) are the browser's own dialog: accepted, as a careful admin would.
    web.page.on('dialog', (dialog) => void dialog.accept());
    return web;
  }

  const profile = (key: string) => post(suite.stack.url, '/api/user/getUserProfile', {}, { key });
  const statusText = (page: Page) => page.locator('main [role="status"]').first().innerText();

  it('Accounts: creates a service account and shows its key once, changes its role and limits, rotates its key, deletes it; creates a user', async () => {
    const { page, errors } = await adminPage('Accounts', 'Accounts');
    const name = `console-${randomUUID().slice(0, 8)}`;
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByRole('form', { name: 'New service account' }).getByLabel('Role').selectOption('developer');
    await page.getByRole('button', { name: 'Create service account' }).click();
    const keyBox = page.locator('.secret-key');
    await expectVisible(keyBox);
    const firstKey = await keyBox.innerText();
    assert.match(firstKey, /^ak_[a-z0-9]{16}_[A-Za-z0-9_-]{43}$/);
    assert.equal((await profile(firstKey)).body.role, 'developer', 'the key shown works');
    await expectNoAxeViolations(page);
    await saveScreenshot(page, 'console-b-accounts-new-key');
    await page.getByRole('button', { name: 'Done' }).click();
    await expectHidden(keyBox);
    assert.ok(!(await page.content()).includes(firstKey), 'the key is gone from the page');

    const row = page.locator(`tr[data-account="${name}"]`);
    await page.getByLabel(`Role of ${name}`).selectOption('admin');
    await waitFor(async () => (await statusText(page)) === `${name} is now admin.`, 15_000, 'the role change');
    assert.equal((await profile(firstKey)).body.role, 'admin');

    await row.getByRole('button', { name: `Limits of ${name}` }).click();
    await page.getByLabel('Runs per minute').fill('30');
    await page.getByRole('button', { name: 'Save limits' }).click();
    await expectVisible(page.getByText(`Limits of ${name} saved.`));
    const limits = await post(suite.stack.url, '/api/admin/getLimits', { name }, { key: firstKey });
    assert.equal(limits.body.limits.runsPerMinute, 30);
    assert.ok(!limits.body.defaults.includes('runsPerMinute'));
    await page.getByLabel('Runs per minute').fill('thirty');
    await page.getByRole('button', { name: 'Save limits' }).click();
    await expectVisible(page.getByRole('alert').getByText('Runs per minute must be a whole number (or empty for the default).'));
    await expectNoAxeViolations(page);
    await saveScreenshot(page, 'console-b-accounts');

    await row.getByRole('button', { name: `Rotate key of ${name}` }).click();
    await expectVisible(keyBox);
    const secondKey = await keyBox.innerText();
    assert.notEqual(secondKey, firstKey);
    assert.equal((await profile(firstKey)).status, 401, 'the old key stopped working');
    assert.equal((await profile(secondKey)).status, 200);
    await page.getByRole('button', { name: 'Done' }).click();

    await row.getByRole('button', { name: `Delete ${name}` }).click();
    await expectHidden(row);
    assert.equal((await profile(secondKey)).status, 401);

    const email = `console-${randomUUID().slice(0, 8)}@example.test`;
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByRole('form', { name: 'New user' }).getByLabel('Plan').selectOption('paid');
    await page.getByRole('button', { name: 'Create user' }).click();
    await expectVisible(page.locator(`tr[data-account="${email}"]`));
    assert.deepEqual((await page.locator(`tr[data-account="${email}"] td`).allInnerTexts()).slice(2, 3), ['paid']);
    assert.equal(await page.getByLabel(`Role of ${email}`).inputValue(), 'user');
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByRole('button', { name: 'Create user' }).click();
    await expectVisible(page.getByRole('alert').getByText('email is the address of another user.'));
    assertNoPageErrors(errors);
  });

  it('Secrets: sets a secret for drafts and lists its name, never its value, then deletes it', async () => {
    const { page, errors } = await adminPage('Secrets', 'Secrets');
    const agentName = `secretive-${randomUUID().slice(0, 8)}`;
    const value = `sk-${randomUUID()}`;
    await page.getByLabel('Agent', { exact: true }).fill(agentName);
    await page.getByLabel('Name', { exact: true }).fill('API_KEY');
    await page.getByLabel('Value').fill(value);
    await page.getByLabel('For drafts').check();
    await page.getByRole('button', { name: 'Set secret' }).click();
    const row = page.locator(`tr[data-secret="${agentName}/API_KEY/drafts"]`);
    await expectVisible(row);
    assert.deepEqual((await row.locator('td, th').allInnerTexts()).slice(0, 3), [agentName, 'API_KEY', 'drafts']);
    assert.equal(await page.getByLabel('Value').inputValue(), '', 'the value is not kept in the form');
    assert.ok(!(await page.content()).includes(value), 'the value is nowhere in the page');
    const stored = await suite.stack.runtime.db.selectFrom('agent_secrets').select(['for_drafts']).where('agent_name', '=', agentName).execute();
    assert.deepEqual(stored, [{ for_drafts: true }]);
    await expectNoAxeViolations(page);
    await saveScreenshot(page, 'console-b-secrets');

    await page.getByLabel('Agent', { exact: true }).fill('not a name!');
    await page.getByLabel('Name', { exact: true }).fill('API_KEY');
    await page.getByLabel('Value').fill('x');
    await page.getByRole('button', { name: 'Set secret' }).click();
    await expectVisible(page.getByRole('alert').getByText(/agentName/));

    await row.getByRole('button', { name: `Delete API_KEY of ${agentName} (drafts)` }).click();
    await expectHidden(row);
    assert.equal((await suite.stack.runtime.db.selectFrom('agent_secrets').select('key').where('agent_name', '=', agentName).execute()).length, 0);
    assertNoPageErrors(errors);
  });

  it('Webhooks: shows the endpoints and the delivery log with attempts and answers, pages it, and delivers a failed one again', async () => {
    const db = suite.stack.runtime.db;
    const account = await createAccount(db);
    await upsertWebhook(db, account.id, receiver.url, suite.stack.runtime.box.seal(generateWebhookSecret()));
    // A background run of the account's: its record queues the delivery (the outbox trigger); two attempts failed, retries over.
    const runId = randomUUID();
    await insertExecution(db, { ...successRecord(randomUUID(), runId, account.id), agent_name: 'hooked', background: true });
    const delivery = await db.selectFrom('webhook_deliveries').select('id').where('run_id', '=', runId).executeTakeFirstOrThrow();
    await db.insertInto('webhook_attempts').values([1, 2].map((attempt) => ({ delivery_id: delivery.id, attempt, url: receiver.url, status: 503, error: 'the receiver answered 503' }))).execute();
    await db.updateTable('webhook_deliveries').set({ status: 'failed', attempts: 2 }).where('id', '=', delivery.id).execute();
    // Another account with 30 deliveries: more than a page of 25.
    const busy = await createAccount(db);
    await upsertWebhook(db, busy.id, receiver.url, suite.stack.runtime.box.seal(generateWebhookSecret()));
    const old = Date.now() - 86_400_000;
    await db.insertInto('webhook_deliveries').values(Array.from({ length: 30 }, (_, i) => ({ run_id: randomUUID(), service_account_id: busy.id, created_at: new Date(old - i * 1000) }))).execute();

    const { page, errors } = await adminPage('Webhooks', 'Webhooks');
    await expectVisible(page.locator('table.endpoints').getByText(account.name));
    assert.ok(!(await page.content()).includes('whsec_'), 'no signing secret');
    await page.getByLabel('Account').selectOption(account.name);
    await page.getByRole('button', { name: 'Show deliveries' }).click();
    const row = page.locator(`tr[data-webhook-id="${delivery.id}"]`);
    await expectVisible(row);
    await waitFor(async () => (await page.locator('table.deliveries tbody tr').count()) === 1, 15_000, 'only the account’s delivery');
    await row.getByText('2 · HTTP 503').click();
    await expectVisible(row.locator('.attempts li').nth(1));
    assert.match(await row.locator('.delivery-failed').innerText(), /failed/);
    await expectNoAxeViolations(page);
    await saveScreenshot(page, 'console-b-webhooks');

    await row.getByRole('button', { name: `Deliver again the end of run ${runId}` }).click();
    await waitFor(() => receiver.webhookIds.includes(delivery.id), 15_000, 'the delivery through the worker');
    await waitFor(async () => (await db.selectFrom('webhook_deliveries').select('status').where('id', '=', delivery.id).executeTakeFirstOrThrow()).status === 'delivered', 15_000, 'delivered');
    await page.getByRole('button', { name: 'Show deliveries' }).click();
    await expectVisible(row.locator('.delivery-delivered'));
    await row.getByText('3 · HTTP 200').click();

    await page.getByLabel('Account').selectOption(busy.name);
    await page.getByRole('button', { name: 'Show deliveries' }).click();
    const rows = page.locator('table.deliveries tbody tr');
    await waitFor(async () => (await rows.count()) === 25, 15_000, 'a page of 25');
    const firstPage = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-webhook-id')));
    await page.getByRole('button', { name: 'Older' }).click();
    await waitFor(async () => (await rows.count()) === 5, 15_000, 'the last 5');
    const secondPage = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-webhook-id')));
    assert.equal(new Set([...firstPage, ...secondPage]).size, 30, 'each delivery on one page');
    await expectHidden(page.getByRole('button', { name: 'Older' }));
    assertNoPageErrors(errors);
  });

  it('Reports: draws usage and failed runs per day as bar charts, for the period chosen', async () => {
    const db = suite.stack.runtime.db;
    const account = await createAccount(db);
    const yesterday = new Date(Date.now() - 86_400_000);
    const day = yesterday.toISOString().slice(0, 10);
    for (const [i, code] of (['timedOut', 'errorInAgent', 'timedOut'] as const).entries()) {
      await insertExecution(db, { ...successRecord(randomUUID()), result_code: code, finished_at: new Date(yesterday.getTime() + i), started_at: yesterday });
    }
    await db
      .insertInto('usage_records')
      .values(Array.from({ length: 4 }, (_, i) => ({ service_account_id: account.id, account_name: account.name, role: 'user' as const, endpoint: '/api/exec/execAgent', agent_name: 'x', result_code: i ? ('success' as const) : ('timedOut' as const), http_status: 200, duration_ms: 5, at: yesterday })))
      .execute();
    const dayStart = new Date(`${day}T00:00:00Z`);
    const dayEnd = new Date(dayStart.getTime() + 86_400_000);
    const failedThatDay = await db.selectFrom('executions').select((eb) => eb.fn.countAll<string>().as('n')).where('result_code', 'not in', ['success', 'ask']).where('draft_id', 'is', null).where('finished_at', '>=', dayStart).where('finished_at', '<', dayEnd).executeTakeFirstOrThrow();
    const callsThatDay = await db.selectFrom('usage_records').select((eb) => eb.fn.countAll<string>().as('n')).where('at', '>=', dayStart).where('at', '<', dayEnd).executeTakeFirstOrThrow();

    const { page, errors } = await adminPage('Reports', 'Reports');
    const errorBar = page.locator(`svg[data-chart="errors-chart"] g[data-bar="${day}"]`);
    const usageBar = page.locator(`svg[data-chart="usage-chart"] g[data-bar="${day}"]`);
    await expectVisible(errorBar.locator('rect'));
    assert.equal(await errorBar.getAttribute('data-total'), String(failedThatDay.n));
    assert.equal(await usageBar.getAttribute('data-total'), String(callsThatDay.n));
    assert.equal(await page.locator('svg[data-chart="usage-chart"] g[data-bar]').count(), 30);
    await expectVisible(page.getByRole('img', { name: 'Failed runs per day' }));
    await expectVisible(page.locator('table.usage-accounts').getByText(account.name));
    await expectNoAxeViolations(page);
    await saveScreenshot(page, 'console-b-reports');

    await page.getByLabel('Period').selectOption('7');
    await waitFor(async () => (await page.locator('svg[data-chart="usage-chart"] g[data-bar]').count()) === 7, 15_000, 'a week of bars');
    assert.equal(await usageBar.getAttribute('data-total'), String(callsThatDay.n));
    assertNoPageErrors(errors);
  });

  it('fits a phone-sized screen: wide tables scroll within the page, which does not scroll sideways', async () => {
    const web = await openPage(suite.browser, suite.stack.url, { phone: true });
    pages.push(web);
    await signInThroughForm(web.page, admin.email, password);
    for (const path of ['/accounts', '/secrets', '/webhooks', '/reports']) {
      await web.page.goto(path);
      await expectVisible(web.page.locator('main h2').first());
      await expectHidden(web.page.getByText('Loading…'));
      const overflow = (await web.page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number;
      assert.ok(overflow <= 0, `${path} scrolls sideways by ${overflow} px`);
      await saveScreenshot(web.page, `console-b-phone${path.replace('/', '-')}`);
    }
    assertNoPageErrors(web.errors);
  });

  it('shows no console to a user who is not an admin; the pages say so and the endpoints answer 403', async () => {
    const web = await openPage(suite.browser, suite.stack.url);
    pages.push(web);
    const { page } = web;
    await signInThroughForm(page, user.email, password);
    await expectVisible(page.getByRole('link', { name: 'Develop' }));
    for (const label of ['Accounts', 'Secrets', 'Webhooks', 'Reports']) assert.equal(await page.getByRole('link', { name: label, exact: true }).count(), 0, label);
    for (const path of ['/accounts', '/secrets', '/webhooks', '/reports']) {
      await page.goto(path);
      await expectVisible(page.getByText('This page is for administrators.'));
      assert.equal(await page.locator('main table').count(), 0);
    }
    for (const endpoint of ['listAccounts', 'listAllSecrets', 'listWebhooks', 'listWebhookDeliveries', 'usageReport']) {
      const answer = await web.context.request.post(`/api/admin/${endpoint}`, { data: {}, headers: { origin: suite.stack.url } });
      assert.equal(answer.status(), 403, endpoint);
    }
  });
});

/** A webhook receiver on loopback that answers 200 and notes each webhook-id. */
async function startReceiver() {
  const webhookIds: string[] = [];
  const server = createServer((req, res) => {
    webhookIds.push(String(req.headers['webhook-id']));
    req.resume();
    req.on('end', () => res.writeHead(200).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { server, port, url: `http://127.0.0.1:${port}/hooks`, webhookIds };
}
