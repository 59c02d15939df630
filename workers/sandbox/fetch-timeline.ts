import type { EntryOf } from './journal.js';
import type { Session } from './session.js';

/**
 * Starts timing a live fetch for the run's timeline; the function returned tells its answer (the
 * journal entry's status, or its error) once the response's headers came or it failed.
 */
export function noteFetch(session: Session, entry: EntryOf<'fetch'>): () => void {
  if (!session.run.onTimeline) return () => undefined;
  const at = new Date();
  return () => {
    const durationMs = Date.now() - at.getTime();
    const { method, url, result, error } = entry;
    session.run.onTimeline?.({ kind: 'fetch', at: at.toISOString(), method, url, status: result?.status ?? null, error: result ? null : (error ?? 'stopped'), durationMs });
  };
}
