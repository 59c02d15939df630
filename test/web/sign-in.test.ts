import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createUser, strongPassword } from '../helpers/fixtures.js';
import type { MailStack } from '../helpers/stack.js';
import { search, signInThroughForm } from './helpers/app-actions.js';
import { openPage, saveFailureScreenshot, saveScreenshot, type WebPage } from './helpers/chromium.js';
import { assertNoPageErrors, expectHidden, expectTitle, expectVisible, focusedElementId } from './helpers/expect.js';
import { startWebSuiteWithMail, type WebSuite } from './helpers/web-suite.js';

describe('web app: signing in', function () {
  this.timeout(60_000);
  let suite: WebSuite<MailStack>;
  let web: WebPage;

  before(async () => {
    suite = await startWebSuiteWithMail();
  });
  after(() => suite?.close());
  beforeEach(async () => {
    web = await openPage(suite.browser, suite.stack.url);
  });
  afterEach(async function () {
    await saveFailureScreenshot(this.currentTest, web?.page);
    await web?.close();
  });

  it('signs in with email and password; a wrong password gets a clear message and the focus', async () => {
    const password = strongPassword();
    const user = await createUser(suite.stack.runtime.db, { password });
    const { page } = web;
    await page.goto('/');
    await expectVisible(page.getByRole('heading', { name: 'Sign in' }));
    await expectTitle(page, 'Sign in — agentexec');
    await page.getByLabel('Email address').fill(user.email);
    await page.getByLabel('Password', { exact: true }).fill('not the password at all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectVisible(page.getByRole('alert').filter({ hasText: 'That email address and password do not match' }));
    assert.equal(await focusedElementId(page), 'email');
    await saveScreenshot(page, 'sign-in-wrong-password');

    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByLabel('Password', { exact: true }).press('Enter');
    await expectVisible(page.getByRole('button', { name: 'Sign out' }));
    await expectVisible(page.getByRole('searchbox', { name: 'Search' }));
    await expectVisible(page.getByText('Test User'));
    assert.equal(await focusedElementId(page), 'query', 'the search box has the focus after signing in');
    await page.keyboard.type('typed at once');
    assert.equal(await page.getByRole('searchbox', { name: 'Search' }).inputValue(), 'typed at once');
    assertNoPageErrors(web.errors);
  });

  it('says so when a second code is asked for within the minute: none is sent, use the first, wait the seconds shown', async () => {
    const user = await createUser(suite.stack.runtime.db);
    const { page } = web;
    await page.goto('/password');
    await expectTitle(page, 'Set your password — agentexec');
    await page.getByLabel('Email address').fill(user.email);
    await page.getByRole('button', { name: 'Email me a code' }).click();
    const code = await suite.stack.smtp.waitForCode(user.email);
    await expectVisible(page.getByRole('status').filter({ hasText: 'a code is on its way' }));

    await page.getByRole('button', { name: 'Send another code' }).click();
    await expectVisible(page.getByRole('status').filter({ hasText: 'No new code was sent: one was asked for this address less than a minute ago' }));
    const wait = page.locator('#code-wait');
    await expectVisible(wait);
    const seconds = Number(/in (\d+) s\./.exec(await wait.innerText())?.[1]);
    assert.ok(seconds > 0 && seconds <= 60, `a wait of 1-60 s is shown (${await wait.innerText()})`);
    const again = page.getByRole('button', { name: /^Send another code \(in \d+ s\)$/ });
    assert.equal(await again.isDisabled(), true, 'the button waits out the minute');
    await saveScreenshot(page, 'password-code-recently-sent');
    assert.deepEqual(suite.stack.smtp.codesTo(user.email), [code], 'the refused ask mailed nothing (it was answered 429 before any mail was queued)');

    // The first code still works.
    await page.getByLabel('Code from the email').fill(code);
    await page.getByLabel('New password').fill(strongPassword());
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await expectVisible(page.getByRole('button', { name: 'Sign out' }));
    await expectTitle(page, 'Search — agentexec');
    assertNoPageErrors(web.errors);
  });

  it('sets a first password with the mailed code, checking the rules as the user types', async () => {
    const user = await createUser(suite.stack.runtime.db);
    const { page } = web;
    await page.goto('/');
    await page.getByRole('link', { name: 'Set a password with an emailed code' }).click();
    await page.getByLabel('Email address').fill(user.email);
    await page.getByRole('button', { name: 'Email me a code' }).click();
    const code = await suite.stack.smtp.waitForCode(user.email);
    await expectVisible(page.getByLabel('Code from the email'));
    assert.equal(await focusedElementId(page), 'code', 'the code field has the focus');
    await page.getByLabel('Code from the email').fill(code);

    const rule = (id: string) => page.locator(`[data-rule="${id}"]`);
    const passwordField = page.getByLabel('New password');
    await passwordField.pressSequentially('short');
    assert.equal(await rule('minLength').getAttribute('data-state'), 'unmet');
    assert.equal(await rule('notCommon').getAttribute('data-state'), 'unknown');
    const localPart = user.email.split('@')[0]!;
    await passwordField.fill(`my name is ${localPart} ok`);
    assert.equal(await rule('minLength').getAttribute('data-state'), 'met');
    assert.equal(await rule('notEmailName').getAttribute('data-state'), 'unmet');

    // A common password passes the checks the page can make; the server refuses it and names the rule.
    await passwordField.fill('momsanaladventure');
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await expectVisible(page.getByRole('alert').filter({ hasText: 'does not meet the password rules' }));
    await expectVisible(page.locator('[data-rule="notCommon"][data-state="unmet"]'));
    await saveScreenshot(page, 'first-password-rules');

    await passwordField.fill(strongPassword());
    assert.equal(await rule('notEmailName').getAttribute('data-state'), 'met');
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await expectVisible(page.getByRole('button', { name: 'Sign out' }));
    assertNoPageErrors(web.errors);
  });

  it('signs out: the session ends on the server, and a reload stays signed out', async () => {
    const password = strongPassword();
    const user = await createUser(suite.stack.runtime.db, { password });
    const { page } = web;
    await signInThroughForm(page, user.email, password);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expectVisible(page.getByText('You are signed out.'));
    const sessions = await suite.stack.runtime.db.selectFrom('sessions').select('id').where('user_id', '=', user.id).execute();
    assert.equal(sessions.length, 0, 'no live session row is left');
    await page.reload();
    await expectVisible(page.getByRole('heading', { name: 'Sign in' }));
    await expectHidden(page.getByRole('button', { name: 'Sign out' }));
    await saveScreenshot(page, 'signed-out');
  });

  it('an ended session sends the user back to sign-in with a clear message, and the next sign-in works', async () => {
    const password = strongPassword();
    const user = await createUser(suite.stack.runtime.db, { password });
    const { page } = web;
    await signInThroughForm(page, user.email, password);
    await sql`delete from sessions where user_id = ${user.id}`.execute(suite.stack.runtime.db);
    await search(page, 'anything');
    await expectVisible(page.getByRole('alert').filter({ hasText: 'Your session has ended. Please sign in again.' }));
    await expectVisible(page.getByRole('heading', { name: 'Sign in' }));
    await saveScreenshot(page, 'session-ended');

    // A page opened later with the dead cookie says the same.
    await signInThroughForm(page, user.email, password);
    await sql`delete from sessions where user_id = ${user.id}`.execute(suite.stack.runtime.db);
    await page.reload();
    await expectVisible(page.getByRole('alert').filter({ hasText: 'Your session has ended' }));
    assertNoPageErrors(web.errors);
  });
});
