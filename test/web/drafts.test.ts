import assert from 'node:assert/strict';
import { createUser, strongPassword, uniqueAgentName } from '../helpers/fixtures.js';
import { signInThroughForm } from './helpers/app-actions.js';
import { openPage, saveFailureScreenshot, saveScreenshot, type WebPage } from './helpers/chromium.js';
import { assertNoPageErrors, expectHidden, expectTitle, expectVisible, focusedElementId } from './helpers/expect.js';
import { waitFor } from '../helpers/wait.js';
import { startWebSuite, type WebSuite } from './helpers/web-suite.js';

const brokenSource = `export default async (sys) => {
  sys.say('hi');
  const x = ;
};
`;

const workingSource = `export default async (sys) => {
  sys.log('starting');
  sys.vars.greeted = sys.query;
  sys.say('Hello, ' + sys.query + '!');
};
`;

describe('web app: drafts for developers', function () {
  this.timeout(60_000);
  let suite: WebSuite;
  let web: WebPage;

  before(async () => {
    suite = await startWebSuite();
  });
  after(() => suite?.close());
  afterEach(async function () {
    await saveFailureScreenshot(this.currentTest, web?.page);
    await web?.close();
  });

  async function signedInPage(role: 'user' | 'developer'): Promise<WebPage> {
    const password = strongPassword();
    const user = await createUser(suite.stack.runtime.db, { password, role });
    web = await openPage(suite.browser, suite.stack.url);
    await signInThroughForm(web.page, user.email, password);
    return web;
  }

  it('shows a compile error at its line, validates the fixed draft with its trace, and publishes it', async () => {
    const { page, errors } = await signedInPage('developer');
    const agentName = uniqueAgentName('draft');
    await page.getByRole('link', { name: 'Develop' }).click();
    await expectTitle(page, 'Drafts — agentexec');
    await page.getByRole('link', { name: 'New draft' }).click();
    await expectTitle(page, 'New draft — agentexec');
    await page.getByLabel('Agent name').fill(agentName);
    await page.getByLabel('Validation query').fill('Ada');
    const source = page.getByRole('textbox', { name: 'Source' });
    await source.fill(brokenSource);
    await page.getByRole('button', { name: 'Validate' }).click();

    const compileErrors = page.locator('#compile-errors');
    await expectVisible(compileErrors.getByRole('heading', { name: '1 compile error' }));
    await expectVisible(compileErrors.getByRole('button', { name: /^Line 3, column \d+$/ }));
    await expectVisible(page.locator('.gutter-line.has-error[data-line="3"]'));
    assert.equal(await page.locator('.gutter-line.has-error').count(), 1, 'only line 3 is marked');
    await expectVisible(page.getByRole('status').filter({ hasText: 'Validation failed' }));
    await saveScreenshot(page, 'draft-compile-error');
    await compileErrors.getByRole('button', { name: /^Line 3/ }).click();
    assert.equal(await focusedElementId(page), 'source', 'the error link puts the cursor in the editor');
    const draftAddress = page.url();

    // The drafts list says which drafts do not compile.
    await page.getByRole('link', { name: 'Develop' }).click();
    const listed = page.locator('li').filter({ has: page.getByRole('link', { name: agentName, exact: true }) });
    await expectVisible(listed.getByText('does not compile'));
    await saveScreenshot(page, 'drafts-list-broken');
    await page.goto(draftAddress);
    // The editor loads the draft after the page: wait for it, or typing would be overwritten by it.
    await waitFor(async () => (await source.inputValue()) === brokenSource, 15_000, 'the draft loaded in the editor');
    await expectTitle(page, `${agentName} — draft — agentexec`);

    await source.fill(workingSource);
    await page.getByRole('button', { name: 'Validate' }).click();
    await expectVisible(page.getByRole('status').filter({ hasText: 'Validation passed (success).' }));
    await expectHidden(compileErrors);
    const validation = page.getByRole('region', { name: 'Validation run' });
    await expectVisible(validation.getByRole('log', { name: 'Draft output' }).getByText('Hello, Ada!'));
    const trace = validation.getByRole('list', { name: 'Trace' });
    await expectVisible(trace.getByText('log: starting'));
    await expectVisible(trace.getByText('sys.vars.greeted = "Ada"'));
    await expectVisible(trace.getByText(/^sys\.say\(.*"Hello, Ada!"\)$/));
    await saveScreenshot(page, 'draft-validated');

    await page.getByRole('button', { name: 'Publish' }).click();
    await expectVisible(page.getByRole('status').filter({ hasText: `Published ${agentName}, version 1.` }));
    const published = await suite.stack.runtime.db.selectFrom('agent_versions').select('version').where('agent_name', '=', agentName).execute();
    assert.deepEqual(published.map((row) => row.version), [1]);
    await page.getByRole('link', { name: 'Develop' }).click();
    await expectVisible(page.getByRole('link', { name: agentName }));
    assertNoPageErrors(errors);
  });

  it('is offered to developers only', async () => {
    const { page, errors } = await signedInPage('user');
    await expectVisible(page.getByRole('link', { name: 'Conversations' }));
    assert.equal(await page.getByRole('link', { name: 'Develop' }).count(), 0);
    await page.goto('/dev');
    await expectVisible(page.getByText('This page is for developers.'));
    await expectTitle(page, 'Not allowed — agentexec');
    assertNoPageErrors(errors);
  });
});
