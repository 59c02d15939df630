import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const axeSourcePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
let axeSource: Promise<string> | undefined;

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * The accessibility rules axe-core finds broken on the page as it is now (WCAG 2.x A and AA and axe's
 * best practices). axe is evaluated into the page over the DevTools protocol, as the app's Content
 * Security Policy refuses inline scripts.
 */
export async function findAxeViolations(page: Page): Promise<Violation[]> {
  axeSource ??= readFile(axeSourcePath, 'utf8');
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(await axeSource);
  return page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((result) =>
    result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) })))`) as Promise<Violation[]>;
}

/** Fails, naming each broken rule and where, when axe-core finds any on the page. */
export async function assertNoAxeViolations(page: Page, what: string): Promise<void> {
  const violations = await findAxeViolations(page);
  assert.deepEqual(violations, [], `${what}: axe-core found accessibility violations`);
}
