import assert from 'node:assert/strict';
import { createUser, publishAgent, strongPassword, uniqueAgentName } from '../helpers/fixtures.js';
import { search, signInThroughForm, transcript } from './helpers/app-actions.js';
import { openPage, saveFailureScreenshot, saveScreenshot, type WebPage } from './helpers/chromium.js';
import { assertNoPageErrors, expectTitle, expectValue, expectVisible } from './helpers/expect.js';
import { startWebSuite, type WebSuite } from './helpers/web-suite.js';

describe('web app: conversations', function () {
  this.timeout(60_000);
  let suite: WebSuite;
  let user: { id: string; email: string };
  let password: string;
  const pages: WebPage[] = [];

  before(async () => {
    suite = await startWebSuite();
  });
  after(() => suite?.close());
  beforeEach(async () => {
    password = strongPassword();
    user = await createUser(suite.stack.runtime.db, { password });
  });
  afterEach(async function () {
    await saveFailureScreenshot(this.currentTest, pages[pages.length - 1]?.page);
    for (const web of pages.splice(0)) await web.close();
  });

  async function signedInPage(): Promise<WebPage> {
    const web = await openPage(suite.browser, suite.stack.url);
    pages.push(web);
    await signInThroughForm(web.page, user.email, password);
    return web;
  }

  const pinnedInDb = async (convid: string) =>
    (await suite.stack.runtime.db.selectFrom('conversations').select('pinned').where('id', '=', convid).executeTakeFirstOrThrow()).pinned;

  it('lists the conversations, pins and unpins one, and opens one to continue it', async () => {
    const { page, errors } = await signedInPage();
    await search(page, 'alpha');
    await expectVisible(transcript(page).getByText('You searched for alpha'));
    const alpha = new URL(page.url()).pathname.slice('/c/'.length);
    await page.getByRole('button', { name: 'New conversation' }).click();
    await search(page, 'beta');
    await expectVisible(transcript(page).getByText('You searched for beta'));

    await page.getByRole('link', { name: 'Conversations' }).click();
    const items = page.locator('li.conversation');
    await expectVisible(items.first());
    assert.deepEqual(await items.locator('.conversation-open').allInnerTexts(), ['beta', 'alpha'], 'most recent first');

    await page.getByRole('button', { name: 'Pin “alpha”', exact: true }).click();
    await expectVisible(page.getByRole('button', { name: 'Unpin “alpha”', exact: true }));
    assert.equal(await pinnedInDb(alpha), true);
    await page.reload();
    await expectVisible(page.getByRole('button', { name: 'Unpin “alpha”', exact: true }));
    await expectVisible(items.filter({ hasText: 'alpha' }).getByText('pinned, kept until unpinned'));
    await saveScreenshot(page, 'conversations-pinned');
    await page.getByRole('button', { name: 'Unpin “alpha”', exact: true }).click();
    await expectVisible(page.getByRole('button', { name: 'Pin “alpha”', exact: true }));
    assert.equal(await pinnedInDb(alpha), false);

    await page.getByRole('link', { name: 'alpha', exact: true }).click();
    assert.equal(new URL(page.url()).pathname, `/c/${alpha}`);
    await search(page, 'gamma');
    await expectVisible(transcript(page).getByText('You searched for gamma (search 2 here).'));
    assertNoPageErrors(errors);
  });

  it('shows a conversation opened on another page as its whole transcript, read back from the server', async () => {
    const first = await signedInPage();
    await search(first.page, 'alpha');
    await expectVisible(transcript(first.page).getByText('(search 1 here)'));
    await search(first.page, 'beta');
    await expectVisible(transcript(first.page).getByText('(search 2 here)'));
    const address = new URL(first.page.url()).pathname;

    const { page, errors } = await signedInPage();
    await page.goto(address);
    const shown = transcript(page);
    await expectVisible(shown.getByText('You searched for alpha (search 1 here).'));
    await expectVisible(shown.getByText('You searched for beta (search 2 here).'));
    assert.deepEqual(await shown.locator('.turn-sent').allInnerTexts(), ['alpha', 'beta'], 'each turn with the query that started it, in order');
    await saveScreenshot(page, 'conversation-transcript');
    await search(page, 'gamma');
    await expectVisible(shown.getByText('You searched for gamma (search 3 here).'));
    assertNoPageErrors(errors);
  });

  it('reopens a conversation with its agent in the picker and the title, so a follow-up runs that agent', async () => {
    const story = uniqueAgentName('story');
    await publishAgent(suite.stack.runtime.db, story, `export default async (sys) => { sys.vars.n = (sys.vars.n ?? 0) + 1; sys.say('Story part ' + sys.vars.n + ': ' + sys.query); }`);
    const { page, errors } = await signedInPage();
    await expectTitle(page, 'Search — agentexec');
    const picker = page.getByLabel('Agent', { exact: true });
    await picker.selectOption(story);
    await search(page, 'once upon a time');
    await expectVisible(transcript(page).getByText('Story part 1: once upon a time'));
    const convid = new URL(page.url()).pathname.slice('/c/'.length);
    await page.getByRole('button', { name: 'New conversation' }).click();
    await picker.selectOption(suite.agentName);

    await page.getByRole('link', { name: 'Conversations' }).click();
    await expectVisible(page.locator('li.conversation').first());
    await expectTitle(page, 'Conversations — agentexec');
    await page.getByRole('link', { name: 'once upon a time', exact: true }).click();
    await expectVisible(transcript(page).getByText('Story part 1: once upon a time'));
    await expectValue(picker, story); // the picker shows the conversation’s agent
    await expectTitle(page, `${story} — conversation — agentexec`);
    await search(page, 'and then');
    await expectVisible(transcript(page).getByText('Story part 2: and then'));
    await saveScreenshot(page, 'conversation-reopened-agent');

    // Read back from the server after a reload: the same.
    await page.reload();
    await expectVisible(transcript(page).getByText('Story part 2: and then'));
    await expectValue(picker, story);
    await expectTitle(page, `${story} — conversation — agentexec`);
    const ran = await suite.stack.runtime.db.selectFrom('executions').select('agent_name').where('convid', '=', convid).orderBy('started_at').execute();
    assert.deepEqual(ran.map((r) => r.agent_name), [story, story], 'the follow-up ran the conversation’s agent, not the default');
    assertNoPageErrors(errors);
  });

  it('a reopened conversation paused on an ask shows the agent that asked in the picker', async () => {
    const asker = uniqueAgentName('asker');
    await publishAgent(suite.stack.runtime.db, asker, `export default async (sys) => { const a = await sys.ask({ message: 'Which planet?', inputs: [{ name: 'planet', type: 'str', label: 'Planet' }] }); sys.say('Off to ' + a.planet + '.'); }`);
    const first = await signedInPage();
    await first.page.getByLabel('Agent', { exact: true }).selectOption(asker);
    await search(first.page, 'travel');
    await expectVisible(first.page.getByRole('form', { name: 'Which planet?' }));

    const { page, errors } = await signedInPage();
    await page.getByRole('link', { name: 'Conversations' }).click();
    await page.getByRole('link', { name: 'travel', exact: true }).click();
    const form = page.getByRole('form', { name: 'Which planet?' });
    await expectVisible(form);
    const picker = page.getByLabel('Agent', { exact: true });
    await expectValue(picker, asker);
    assert.equal(await picker.isDisabled(), true, 'the ask is answered to the agent that asked');
    await expectTitle(page, `${asker} — conversation — agentexec`);
    await saveScreenshot(page, 'conversation-reopened-ask');
    await form.getByLabel('Planet').fill('Mars');
    await form.getByRole('button', { name: 'Send answers' }).click();
    await expectVisible(transcript(page).getByText('Off to Mars.'));
    assertNoPageErrors(errors);
  });

  it('shows the answers sent, in a transcript read back after a reload; answers sent elsewhere are said to be not kept', async () => {
    const { page, errors } = await signedInPage();
    await search(page, 'size');
    const form = page.getByRole('form', { name: 'Which size?' });
    await expectVisible(form);
    await form.getByRole('radio', { name: 'large' }).check();
    await form.getByRole('button', { name: 'Send answers' }).click();
    await expectVisible(transcript(page).getByText('Size large it is.'));
    const address = new URL(page.url()).pathname;

    await page.reload();
    await expectVisible(transcript(page).getByText('Size large it is.'));
    assert.deepEqual(await transcript(page).locator('.turn-sent').allInnerTexts(), ['size', 'Your answers — Size: large']);
    await saveScreenshot(page, 'transcript-answers-after-reload');

    // Another browser (no answers of its own to recall): the server never kept them, and the page says so.
    const other = await signedInPage();
    await other.page.goto(address);
    await expectVisible(transcript(other.page).getByText('Size large it is.'));
    const answersLine = transcript(other.page).locator('.turn-answers');
    assert.match(await answersLine.innerText(), /^Your answers — not shown: the server does not keep answers/);
    await saveScreenshot(other.page, 'transcript-answers-elsewhere');
    assertNoPageErrors(errors);
    assertNoPageErrors(other.errors);
  });

  it('a conversation paused on an ask, opened on another page, shows the ask again and continues', async () => {
    const first = await signedInPage();
    await search(first.page, 'size');
    await expectVisible(first.page.getByRole('form', { name: 'Which size?' }));

    const { page, errors } = await signedInPage();
    await page.getByRole('link', { name: 'Conversations' }).click();
    await page.getByRole('link', { name: 'size', exact: true }).click();
    const form = page.getByRole('form', { name: 'Which size?' });
    await expectVisible(form);
    await form.getByRole('radio', { name: 'small' }).check();
    await form.getByRole('button', { name: 'Send answers' }).click();
    await expectVisible(transcript(page).getByText('Size small it is.'));
    await saveScreenshot(page, 'conversation-continued');
    // Answered, its last call has no query: it is still listed by the query that started it.
    await page.getByRole('link', { name: 'Conversations' }).click();
    await expectVisible(page.getByRole('link', { name: 'size', exact: true }));
    await saveScreenshot(page, 'conversations-titled');
    assertNoPageErrors(errors);
  });
});
