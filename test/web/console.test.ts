import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentexecClient } from '../../clients/typescript/src/index.js';
import { expectNoAxeViolations } from '../helpers/axe.js';
import { createAccount, createUser, publishAgent, strongPassword, uniqueAgentName } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';
import { signInThroughForm } from './helpers/app-actions.js';
import { openPage, saveFailureScreenshot, saveScreenshot, type WebPage } from './helpers/chromium.js';
import { assertNoPageErrors, expectTitle, expectVisible } from './helpers/expect.js';
import { startWebSuite, type WebSuite } from './helpers/web-suite.js';

/** The console's Run page and Queues page (DESIGN §18), in Chromium, checked by axe-core. */
describe('web app: a run and the queues (console)', function () {
  this.timeout(90_000);
  let suite: WebSuite;
  let server: http.Server;
  let base: string;
  const password = strongPassword();
  let admin: { id: string; email: string };
  let user: { id: string; email: string };
  let adminClient: AgentexecClient;
  let callerClient: AgentexecClient;
  const pages: WebPage[] = [];
  const fetcher = uniqueAgentName('fetcher');
  const sleeper = uniqueAgentName('sleeper');
  const kid = uniqueAgentName('kid');
  const parent = uniqueAgentName('parent');

  before(async () => {
    server = http.createServer((req, res) => void res.writeHead(req.url === '/ok' ? 200 : 503).end('hi'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    suite = await startWebSuite({ REDIS_SHARDS: '2' });
    const db = suite.stack.runtime.db;
    admin = await createUser(db, { password, role: 'admin' });
    user = await createUser(db, { password });
    adminClient = new AgentexecClient({ baseUrl: suite.stack.url, apiKey: (await createAccount(db, 'admin')).key });
    callerClient = new AgentexecClient({ baseUrl: suite.stack.url, apiKey: (await createAccount(db)).key });
    await publishAgent(
      db,
      fetcher,
      `export default async (sys) => {
        const ok = await sys.fetch(sys.inputs.base + '/ok');
        const down = await sys.fetch(sys.inputs.base + '/down');
        sys.log('statuses ' + ok.status + ' ' + down.status);
        sys.say('**fetched** both');
      }`,
    );
    await publishAgent(db, sleeper, `export default async (sys) => { await sys.sleep(4000); sys.say('woke'); }`);
    await publishAgent(db, kid, `export default async (sys) => sys.say('kid')`);
    await publishAgent(db, parent, `export default async (sys) => { const child = await sys.call(${JSON.stringify(kid)}); sys.say(child.runId); }`);
  });
  after(async () => {
    await suite?.close();
    server?.close();
  });
  afterEach(async function () {
    await saveFailureScreenshot(this.currentTest, pages[pages.length - 1]?.page);
    for (const web of pages.splice(0)) await web.close();
    await adminClient.resumeQueues();
  });

  async function signedInPage(email: string): Promise<WebPage> {
    const web = await openPage(suite.browser, suite.stack.url);
    pages.push(web);
    await signInThroughForm(web.page, email, password);
    return web;
  }

  it("takes an admin from the Runs list to a run's page: its timeline with each fetch's status and duration, its log line and output", async () => {
    const { runId } = await callerClient.submit(fetcher, { base });
    assert.equal((await callerClient.wait(runId)).response?.resultCode, 'success');
    const { page, errors } = await signedInPage(admin.email);
    await page.getByRole('link', { name: 'Runs' }).click();
    await expectTitle(page, 'Runs — agentexec');
    await expectNoAxeViolations(page);
    await page.getByLabel('Agent').fill(fetcher);
    await page.getByRole('button', { name: 'Show runs' }).click();
    const row = page.locator(`tr[data-run-id="${runId}"]`);
    await row.getByRole('link').click();
    await expectTitle(page, `Run of ${fetcher} — agentexec`);
    assert.equal(new URL(page.url()).pathname, `/runs/${runId}`);

    const timeline = page.getByRole('list').filter({ has: page.locator('[data-kind]') });
    await expectVisible(timeline.locator('li[data-kind="ended"]'));
    const kinds = await timeline.locator('li').evaluateAll((items) => items.map((li) => li.getAttribute('data-kind')));
    assert.deepEqual(kinds, ['queued', 'started', 'fetch', 'fetch', 'log', 'ended']);
    const fetches = await timeline.locator('li[data-kind="fetch"] .timeline-what').allInnerTexts();
    assert.match(fetches[0]!, new RegExp(`^GET ${base}/ok → 200 in \\d+ ms$`));
    assert.match(fetches[1]!, new RegExp(`^GET ${base}/down → 503 in \\d+ ms$`));
    assert.equal(await timeline.locator('li[data-kind="log"] .timeline-what').innerText(), 'Log: statuses 200 503');
    assert.equal(await page.locator('.output strong').innerText(), 'fetched', 'the output rendered as Markdown');
    assert.match(await page.locator('dl.facts').innerText(), /Result\s+success/);
    assert.equal(await page.getByRole('button', { name: 'Cancel run' }).count(), 0, 'an ended run has no Cancel');
    await saveScreenshot(page, 'console-run');
    await expectNoAxeViolations(page);
    assertNoPageErrors(errors);
  });

  it("links a child run's page to its parent's, the run whose agent called it", async () => {
    const { runId } = await callerClient.submit(parent);
    const ended = await callerClient.wait(runId);
    assert.equal(ended.response?.resultCode, 'success', JSON.stringify(ended));
    const childRunId = (ended.response!.output[0] as { text: string }).text;
    const { page, errors } = await signedInPage(admin.email);
    await page.goto(`/runs/${childRunId}`);
    await expectTitle(page, `Run of ${kid} — agentexec`);
    await expectNoAxeViolations(page);
    await page.getByRole('link', { name: `run ${runId}` }).click();
    await expectTitle(page, `Run of ${parent} — agentexec`);
    assert.equal(new URL(page.url()).pathname, `/runs/${runId}`);
    assert.doesNotMatch(await page.locator('dl.facts').innerText(), /Called by/, 'a run no agent called names no parent');
    assertNoPageErrors(errors);
  });

  it('lets an admin cancel a running run from its page; it ends stopped', async () => {
    const { runId } = await callerClient.submit(sleeper);
    await waitFor(async () => (await adminClient.adminGetRun(runId)).status === 'running', 10_000, 'the run to start');
    const { page, errors } = await signedInPage(admin.email);
    await page.goto(`/runs/${runId}`);
    await expectTitle(page, `Run of ${sleeper} — agentexec`);
    await expectNoAxeViolations(page);
    await saveScreenshot(page, 'console-run-running');
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await expectVisible(page.getByText('Cancelled: the run ends stopped.'));
    await expectVisible(page.locator('li[data-kind="ended"]', { hasText: 'Ended stopped' }));
    assert.equal((await adminClient.adminGetRun(runId)).resultCode, 'stopped');
    assertNoPageErrors(errors);
  });

  it('shows an admin each shard and the worker, and pauses intake until resumed', async () => {
    const { page, errors } = await signedInPage(admin.email);
    await page.getByRole('link', { name: 'Queues' }).click();
    await expectTitle(page, 'Queues and workers — agentexec');
    const shards = page.getByRole('table', { name: 'Run queues' }).locator('tbody tr');
    await expectVisible(shards.first());
    assert.equal(await shards.count(), 2);
    const workers = page.getByRole('table', { name: 'Workers' }).locator('tbody tr');
    await expectVisible(workers.first());
    assert.match(await workers.first().innerText(), /takes new runs/);
    await expectNoAxeViolations(page);

    await page.getByRole('button', { name: 'Pause intake' }).click();
    await expectVisible(page.getByText('Intake paused: no queued run starts until you resume.'));
    assert.equal((await adminClient.getQueues()).paused, true);
    const { runId } = await callerClient.submit(fetcher, { base });
    // The page reads the queues every few seconds: the run shows as waiting on its shard.
    await waitFor(async () => (await shards.locator('td:nth-child(2)').allInnerTexts()).map(Number).reduce((a, b) => a + b, 0) === 1, 15_000, 'one run waiting');
    assert.equal((await adminClient.adminGetRun(runId)).status, 'queued');
    await saveScreenshot(page, 'console-queues-paused');
    await expectNoAxeViolations(page);

    await page.getByRole('button', { name: 'Resume intake' }).click();
    await expectVisible(page.getByText('Intake resumed: queued runs start again.'));
    assert.equal((await callerClient.wait(runId)).response?.resultCode, 'success');
    await saveScreenshot(page, 'console-queues');
    assertNoPageErrors(errors);
  });

  it('offers a user who is not an admin no Queues link, and neither page', async () => {
    const { runId } = await callerClient.submit(fetcher, { base });
    const { page } = await signedInPage(user.email);
    await expectVisible(page.getByRole('link', { name: 'Conversations' }));
    assert.equal(await page.getByRole('link', { name: 'Queues' }).count(), 0);
    for (const path of ['/queues', `/runs/${runId}`]) {
      await page.goto(path);
      await expectVisible(page.getByText('This page is for administrators.'));
    }
    const status = await page.evaluate(
      async (id) => (await fetch('/api/admin/getRun', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ runId: id }) })).status,
      runId,
    );
    assert.equal(status, 403, "the user's own session is refused by the endpoint");
  });
});
