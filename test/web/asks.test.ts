import assert from 'node:assert/strict';
import { createUser, strongPassword } from '../helpers/fixtures.js';
import { search, signInThroughForm, transcript } from './helpers/app-actions.js';
import { openPage, saveFailureScreenshot, saveScreenshot, type WebPage } from './helpers/chromium.js';
import { assertNoPageErrors, expectHidden, expectVisible, focusedElementId } from './helpers/expect.js';
import { startWebSuite, type WebSuite } from './helpers/web-suite.js';

describe('web app: asks', function () {
  this.timeout(60_000);
  let suite: WebSuite;
  let web: WebPage;

  before(async () => {
    suite = await startWebSuite();
  });
  after(() => suite?.close());
  beforeEach(async () => {
    const password = strongPassword();
    const user = await createUser(suite.stack.runtime.db, { password });
    web = await openPage(suite.browser, suite.stack.url);
    await signInThroughForm(web.page, user.email, password);
  });
  afterEach(async function () {
    await saveFailureScreenshot(this.currentTest, web?.page);
    await web?.close();
  });

  it('shows a labelled form for every input type, with descriptions and defaults; the answers continue the run', async () => {
    const { page } = web;
    await search(page, 'form');
    const form = page.getByRole('form', { name: 'Tell us about yourself' });
    await expectVisible(form);
    assert.equal(await focusedElementId(page), 'ask-name', 'the first field has the focus');
    await expectVisible(page.getByRole('searchbox', { name: 'Search' }).and(page.locator(':disabled')));

    const name = form.getByRole('textbox', { name: 'Your name' });
    assert.equal(await name.inputValue(), 'Ada', 'the default');
    assert.equal(await name.getAttribute('aria-describedby'), 'ask-name-description');
    await expectVisible(form.getByText('What we call you'));
    const secret = form.getByLabel('A secret');
    assert.equal(await secret.getAttribute('type'), 'password', 'masked');
    await expectVisible(form.getByText('Never shown back'));
    const bio = form.getByRole('textbox', { name: 'About you' });
    assert.equal(await bio.evaluate((element: any) => element.tagName), 'TEXTAREA');
    assert.equal(await form.getByRole('radio', { name: 'green' }).isChecked(), true, 'chooseOne default');
    assert.equal(await form.getByRole('checkbox', { name: 'TypeScript' }).isChecked(), true, 'chooseMany default');
    await expectVisible(form.getByRole('group', { name: 'Favourite colour' }));
    await expectVisible(form.getByRole('group', { name: 'Languages' }));

    await name.fill('Grace');
    await secret.fill('hunter2 secret');
    await bio.fill('Writes compilers');
    await form.getByRole('radio', { name: 'blue' }).check();
    await form.getByRole('checkbox', { name: 'TypeScript' }).uncheck();
    await form.getByRole('checkbox', { name: 'Go' }).check();
    await form.getByRole('checkbox', { name: 'Python' }).check();
    await saveScreenshot(page, 'ask-form-filled');
    await form.getByRole('button', { name: 'Send answers' }).click();

    await expectVisible(transcript(page).getByText('Thanks Grace: secret of 14 characters, bio "Writes compilers", colour blue, languages go+py.'));
    await expectHidden(form);
    const shown = await transcript(page).innerText();
    assert.ok(!shown.includes('hunter2'), 'the password answer is not shown');
    assert.match(shown, /A secret: ••••••/);
    await expectVisible(page.getByRole('searchbox', { name: 'Search' }).and(page.locator(':enabled')));
    await saveScreenshot(page, 'ask-answered');
    assertNoPageErrors(web.errors);
  });

  it('keeps the user’s other answers when the agent refuses one', async () => {
    const { page } = web;
    await search(page, 'form');
    const form = page.getByRole('form', { name: 'Tell us about yourself' });
    await expectVisible(form);
    await form.getByLabel('Your name').fill('Grace');
    await form.getByLabel('A secret').fill('s3cret');
    await form.getByRole('radio', { name: 'blue' }).check();
    await form.getByRole('checkbox', { name: 'Go' }).check();
    // "About you" left empty: the agent needs it, and refuses the answers.
    await form.getByRole('button', { name: 'Send answers' }).click();
    await expectVisible(form.getByText('An answer is required.'));
    assert.equal(await form.getByLabel('Your name').inputValue(), 'Grace');
    assert.equal(await form.getByLabel('A secret').inputValue(), 's3cret');
    assert.equal(await form.getByRole('radio', { name: 'blue' }).isChecked(), true);
    assert.equal(await form.getByRole('checkbox', { name: 'Go' }).isChecked(), true);
    assert.equal(await form.getByRole('checkbox', { name: 'TypeScript' }).isChecked(), true);
    assert.equal(await focusedElementId(page), await form.getByLabel('About you').getAttribute('id'), 'the focus is on the refused field');
    await saveScreenshot(page, 'ask-refused-answers-kept');
    await form.getByLabel('About you').fill('Writes compilers.');
    await form.getByRole('button', { name: 'Send answers' }).click();
    await expectVisible(transcript(page).getByText('Thanks Grace: secret of 6 characters, bio "Writes compilers.", colour blue, languages ts+go.'));
    assertNoPageErrors(web.errors);
  });

  it('an invalid answer is shown next to its field, which gets the focus; the keyboard fixes it', async () => {
    const { page } = web;
    await search(page, 'size');
    const form = page.getByRole('form', { name: 'Which size?' });
    await expectVisible(form);
    await form.getByRole('button', { name: 'Send answers' }).click();

    const group = form.getByRole('group', { name: 'Size' });
    await expectVisible(group.getByText('An answer is required.'));
    assert.equal(await group.getAttribute('aria-invalid'), 'true');
    assert.equal(await page.evaluate('document.activeElement.value'), 'small', 'the focus is on the refused field');
    await saveScreenshot(page, 'ask-invalid-answer');

    await page.keyboard.press('ArrowDown');
    assert.equal(await form.getByRole('radio', { name: 'large' }).isChecked(), true);
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate('document.activeElement.textContent'), 'Send answers');
    await page.keyboard.press('Enter');
    await expectVisible(transcript(page).getByText('Size large it is.'));
    assertNoPageErrors(web.errors);
  });
});
