import type { Browser } from 'playwright-core';
import { publishAgent, uniqueAgentName } from '../../helpers/fixtures.js';
import { startStack, startStackWithMail, type MailStack, type Stack } from '../../helpers/stack.js';
import { launchChromium } from './chromium.js';
import { webTestAgentSource } from './web-agent.js';

export interface WebSuite<S extends Stack = Stack> {
  stack: S;
  browser: Browser;
  /** The DEFAULT_AGENT of the stack: the search box runs it (see web-agent.ts). */
  agentName: string;
  close(): Promise<void>;
}

/** A real stack serving the web app, whose default agent is the test agent, and one Chromium. */
export async function startWebSuite(overrides: Record<string, string> = {}): Promise<WebSuite> {
  const agentName = uniqueAgentName('web');
  return withBrowser(await startStack({ DEFAULT_AGENT: agentName, ...overrides }), agentName);
}

/** The same, with mail going to a real SMTP server (for codes). */
export async function startWebSuiteWithMail(overrides: Record<string, string> = {}): Promise<WebSuite<MailStack>> {
  const agentName = uniqueAgentName('web');
  return withBrowser(await startStackWithMail({ DEFAULT_AGENT: agentName, ...overrides }), agentName);
}

/**
 * Closes the stack when the suite cannot start (no Chromium, say): the stack's worker shares this test
 * run's queue prefix, and one left running would take the jobs of later suites under its own settings.
 */
async function withBrowser<S extends Stack>(stack: S, agentName: string): Promise<WebSuite<S>> {
  let browser: Browser;
  try {
    await publishAgent(stack.runtime.db, agentName, webTestAgentSource);
    browser = await launchChromium();
  } catch (err) {
    await stack.close();
    throw err;
  }
  return {
    stack,
    browser,
    agentName,
    async close() {
      await browser.close();
      await stack.close();
    },
  };
}
