import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { post } from '../helpers/api.js';
import { createAccount, createUser, publishAgent, strongPassword, uniqueAgentName } from '../helpers/fixtures.js';
import { answerTokens, startLlmServer, type LlmServer } from '../helpers/llm-server.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { search, signInThroughForm, transcript } from './helpers/app-actions.js';
import { launchChromium, openPage, saveFailureScreenshot, saveScreenshot, type WebPage } from './helpers/chromium.js';
import { assertNoPageErrors, expectHidden, expectVisible } from './helpers/expect.js';

const agentsDir = fileURLToPath(new URL('../../../agents/', import.meta.url));

/** DEFAULT_AGENT=chat (agents/chat.ts) against an LLM-like server: the search box is a chat. */
describe('web app: the search box as a chat', function () {
  this.timeout(60_000);
  let stack: Stack;
  let llm: LlmServer;
  let browser: Browser;
  let web: WebPage | undefined;
  const chat = uniqueAgentName('chat');

  before(async () => {
    llm = await startLlmServer();
    stack = await startStack({ DEFAULT_AGENT: chat });
    await publishAgent(stack.runtime.db, chat, await readFile(`${agentsDir}chat.ts`, 'utf8'));
    const admin = (await createAccount(stack.runtime.db, 'admin')).key;
    for (const [key, value] of [['LLM_BASE_URL', llm.baseUrl], ['LLM_API_KEY', `sk-${randomBytes(8).toString('hex')}`]]) {
      const set = await post(stack.url, '/api/admin/setSecret', { agentName: chat, key, value }, { key: admin });
      assert.equal(set.status, 200, JSON.stringify(set.body));
    }
    browser = await launchChromium();
  });
  afterEach(async function () {
    await saveFailureScreenshot(this.currentTest, web?.page);
    await web?.close();
    llm.holdAfter(null);
  });
  after(async () => {
    await browser?.close();
    await stack?.close();
    await llm?.close();
  });

  it('shows the tokens as they arrive, and the next message goes on with the same chat', async () => {
    const password = strongPassword();
    const user = await createUser(stack.runtime.db, { password });
    web = await openPage(browser, stack.url);
    const { page } = web;
    await signInThroughForm(page, user.email, password);

    llm.holdAfter(4);
    await search(page, 'tell me about streams');
    const tokens = answerTokens('tell me about streams');
    await expectVisible(transcript(page).getByText(tokens.slice(0, 4).join('')));
    assert.equal(await transcript(page).getByText(tokens.join('')).count(), 0, 'the rest has not come yet');
    await expectVisible(page.getByRole('button', { name: 'Stop' }));
    await saveScreenshot(page, 'chat-streaming');
    llm.holdAfter(null);
    llm.release();
    await expectVisible(transcript(page).getByText(tokens.join('')));
    await expectHidden(page.getByRole('button', { name: 'Stop' }));

    await search(page, 'and rivers?');
    await expectVisible(transcript(page).getByText(answerTokens('and rivers?').join('')));
    await saveScreenshot(page, 'chat-second-message');
    assert.deepEqual(
      llm.requests.at(-1)!.messages.slice(1).map((m) => m.role),
      ['user', 'assistant', 'user'],
      'the second request carried the first exchange',
    );
    assertNoPageErrors(web.errors);
  });
});
