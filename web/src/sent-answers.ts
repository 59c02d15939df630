/**
 * The answers this tab sent to asks, as their transcript line shows them (passwords masked), by the
 * run they started: the server never keeps answers, so a conversation read back after a reload shows
 * them only from here. Kept in sessionStorage: the tab's own, gone when it closes (answers are not
 * left on a shared computer), and forgotten on sign-out.
 */
const storageKey = 'agentexec.sentAnswers';
/** The newest this many are kept. */
const maxKept = 200;

export function rememberAnswers(runId: string, summary: string): void {
  const kept = readAll();
  kept[runId] = summary;
  const runIds = Object.keys(kept);
  for (const old of runIds.slice(0, Math.max(0, runIds.length - maxKept))) delete kept[old];
  write(kept);
}

export function recallAnswers(runId: string): string | undefined {
  return readAll()[runId];
}

export function forgetAnswers(): void {
  try {
    sessionStorage.removeItem(storageKey);
  } catch {
    // storage disabled: nothing was kept
  }
}

function readAll(): Record<string, string> {
  try {
    const parsed: unknown = JSON.parse(sessionStorage.getItem(storageKey) ?? '{}');
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, string>) : {};
  } catch {
    return {};
  }
}

function write(kept: Record<string, string>): void {
  try {
    sessionStorage.setItem(storageKey, JSON.stringify(kept));
  } catch {
    // storage disabled or full: the answers show on this page only
  }
}
