import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

/** axe-core's browser build, read once (a devDependency; never served by the app). */
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** One axe-core finding, as the assertion reports it. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

export interface AxeOptions {
  /** A CSS selector: check only what is inside it (the whole document by default). */
  include?: string;
  /** Rule ids not to run, each with the reason in the caller's comment. */
  disableRules?: string[];
}

/**
 * Runs axe-core (WCAG 2.x A and AA, and its best practices) on the page as it is now; the violations
 * found. The app's Content Security Policy refuses inline scripts, so axe is not added as a script tag:
 * its source is evaluated through the DevTools protocol, which the page's CSP does not govern.
 */
export async function findAxeViolations(page: Page, options: AxeOptions = {}): Promise<AxeViolation[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(axeSource);
  return page.evaluate(
    async ({ include, disableRules }) => {
      // Runs in the page: its globals, typed here for what is used of them.
      const { axe, document } = globalThis as unknown as { document: unknown; axe: { run: (context: unknown, options: unknown) => Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[] }> } };
      const rules = Object.fromEntries((disableRules ?? []).map((id) => [id, { enabled: false }]));
      const result = await axe.run(include ? { include: [include] } : document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] }, rules });
      return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.map(String).join(' ')) }));
    },
    { include: options.include, disableRules: options.disableRules },
  );
}

/** Fails, listing each rule, its impact and the elements, when axe-core finds any violation on the page. */
export async function expectNoAxeViolations(page: Page, options: AxeOptions = {}): Promise<void> {
  const violations = await findAxeViolations(page, options);
  const report = violations.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.targets.slice(0, 5).join(', ')}`).join('\n');
  assert.equal(violations.length, 0, `axe-core found accessibility violations on ${page.url()}:\n${report}`);
}
