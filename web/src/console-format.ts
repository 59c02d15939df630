/** How the console writes times, durations and accounts. */

export const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

export function durationText(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function accountText(account: { kind: 'user' | 'serviceAccount'; id: string; name?: string; email?: string }): string {
  return account.name ?? account.email ?? `${account.kind === 'user' ? 'user' : 'service account'} ${account.id.slice(0, 8)} (deleted)`;
}

/** The class a result code is shown with: ok, ask, or failed. */
export function resultClass(resultCode: string): string {
  return `run-result-${resultCode === 'success' ? 'ok' : resultCode === 'ask' ? 'ask' : 'failed'}`;
}
