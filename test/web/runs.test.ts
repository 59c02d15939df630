import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { randomUUID } from 'node:crypto';
import type { ResultCode } from '../../shared/api.js';
import { insertExecution } from '../../db/executions.repository.js';
import { createAccount, createUser, strongPassword, successRecord, uniqueAgentName } from '../helpers/fixtures.js';
import { signInThroughForm } from './helpers/app-actions.js';
import { openPage, saveFailureScreenshot, saveScreenshot, type WebPage } from './helpers/chromium.js';
import { assertNoPageErrors, expectHidden, expectVisible } from './helpers/expect.js';
import { waitFor } from '../helpers/wait.js';
import { expectNoAxeViolations } from '../helpers/axe.js';
import { startWebSuite, type WebSuite } from './helpers/web-suite.js';

/** The console's Runs page (DESIGN §18): admins see every caller's runs, filtered and paged. */
describe('web app: runs (console)', function () {
  this.timeout(60_000);
  let suite: WebSuite;
  const password = strongPassword();
  let admin: { id: string; email: string };
  let user: { id: string; email: string };
  let service: { id: string; name: string };
  const pages: WebPage[] = [];
  const alpha = uniqueAgentName('alpha');
  const beta = uniqueAgentName('beta');
  const codes: ResultCode[] = ['success', 'timedOut', 'ask'];
  /** The seeded records, newest first. */
  const seeded: { id: string; agent: string; code: ResultCode }[] = [];

  before(async () => {
    suite = await startWebSuite();
    admin = await createUser(suite.stack.runtime.db, { password, role: 'admin' });
    user = await createUser(suite.stack.runtime.db, { password });
    service = await createAccount(suite.stack.runtime.db);
    // 124 runs, a second apart: each agent's 62 are more than one page of 50. Other tests' runs share the
    // database (some with clocks of their own), so the pages are read filtered by agent.
    const newest = Date.now() - 1000;
    for (let i = 0; i < 124; i++) {
      const id = randomUUID();
      const agent = i % 2 ? beta : alpha;
      const code = codes[i % codes.length]!;
      const started = new Date(newest - i * 1000);
      await insertExecution(suite.stack.runtime.db, {
        ...successRecord(randomUUID(), id),
        agent_name: agent,
        result_code: code,
        ...(i % 5 ? { principal_kind: 'user' as const, principal_id: user.id } : { principal_id: service.id }),
        started_at: started,
        finished_at: new Date(started.getTime() + 1500),
        duration_ms: 1500,
      });
      seeded.push({ id, agent, code });
    }
  });
  after(() => suite?.close());
  afterEach(async function () {
    await saveFailureScreenshot(this.currentTest, pages[pages.length - 1]?.page);
    for (const web of pages.splice(0)) await web.close();
  });

  async function signedInPage(email: string): Promise<WebPage> {
    const web = await openPage(suite.browser, suite.stack.url);
    pages.push(web);
    await signInThroughForm(web.page, email, password);
    return web;
  }

  /** Polls page.title() from here: a string waitForFunction (expectTitle) is refused by the page's CSP when it has to poll. */
  const expectRunsTitle = (page: Page) => waitFor(async () => (await page.title()) === 'Runs — agentexec', 15_000, 'the title "Runs — agentexec"');

  it('shows an admin every run, newest first, a page at a time, with labelled filters and column headers', async () => {
    const { page, errors } = await signedInPage(admin.email);
    await page.getByRole('link', { name: 'Runs' }).click();
    await expectRunsTitle(page);
    const table = page.getByRole('table', { name: 'Runs, newest first' });
    const rows = table.locator('tbody tr');
    await expectVisible(rows.first());
    assert.deepEqual(await table.getByRole('columnheader').allInnerTexts(), ['Started', 'Agent', 'Account', 'Result', 'Duration']);
    const ids = () => rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run-id')));
    const alphas = seeded.filter((s) => s.agent === alpha).map((s) => s.id);
    await page.getByLabel('Agent').fill(alpha);
    await page.getByRole('button', { name: 'Show runs' }).click();
    // The whole page, not its first row: the unfiltered page shown before may start with the same run.
    await waitFor(async () => (await ids()).join() === alphas.slice(0, 50).join(), 15_000, `the runs of ${alpha}`);
    assert.deepEqual((await rows.nth(1).locator('td').allInnerTexts()).slice(1), [alpha, user.email, 'ask', '1.5 s']);
    const first = rows.first().locator('td');
    assert.deepEqual((await first.allInnerTexts()).slice(1), [alpha, service.name, 'success', '1.5 s']);
    // Every form control of the page has a label.
    assert.equal(await page.evaluate(`[...document.querySelectorAll('main input, main select')].filter((e) => !e.labels || !e.labels.length).length`), 0);
    await saveScreenshot(page, 'console-runs');
    await expectNoAxeViolations(page);

    await page.getByRole('button', { name: 'Older' }).click();
    await expectVisible(page.getByRole('button', { name: 'Newer' }));
    await waitFor(async () => (await ids())[0] === alphas[50], 15_000, 'the older page');
    assert.deepEqual(await ids(), alphas.slice(50));
    await expectHidden(page.getByRole('button', { name: 'Older' }));
    await page.getByRole('button', { name: 'Newer' }).click();
    await waitFor(async () => (await ids())[0] === alphas[0], 15_000, 'the newest page again');
    assert.equal(await rows.count(), 50);
    assertNoPageErrors(errors);
  });

  it('filters by agent and result code', async () => {
    const { page, errors } = await signedInPage(admin.email);
    await page.goto('/runs');
    await expectRunsTitle(page);
    await page.getByLabel('Agent').fill(beta);
    await page.getByLabel('Result code').selectOption('timedOut');
    await page.getByRole('button', { name: 'Show runs' }).click();
    const expected = seeded.filter((s) => s.agent === beta && s.code === 'timedOut').map((s) => s.id);
    assert.ok(expected.length > 0);
    const rows = page.locator('table.runs tbody tr');
    await waitFor(async () => (await rows.count()) === expected.length, 15_000, 'the filtered rows');
    assert.deepEqual(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run-id'))), expected);
    await saveScreenshot(page, 'console-runs-filtered');

    await page.getByLabel('Agent').fill('no-such-agent');
    await page.getByRole('button', { name: 'Show runs' }).click();
    await expectVisible(page.getByText('No runs match.'));
    assertNoPageErrors(errors);
  });

  it('is not in the menu of a user who is not an admin, and its address says it is for administrators', async () => {
    const { page } = await signedInPage(user.email);
    await expectVisible(page.getByRole('link', { name: 'Conversations' }));
    assert.equal(await page.getByRole('link', { name: 'Runs' }).count(), 0);
    await page.goto('/runs');
    await expectVisible(page.getByText('This page is for administrators.'));
    assert.equal(await page.locator('table.runs').count(), 0);
  });
});
