import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { AgentexecClient, AgentexecError, type AdminApi } from '../../../clients/typescript/src/index';
import { reportSessionEnded } from '../api/http';
import { errorMessage } from '../messages';

/** The console's admin endpoints (DESIGN §18), through the TypeScript client with the session cookie. */
export function useAdmin(): AdminApi {
  return useMemo(() => new AgentexecClient({ baseUrl: '' }).admin, []);
}

/**
 * What to show for a failed admin call: each wrong field of a 400 with what is wrong with it, ours for
 * the well-known codes, else the server's message. A 401 ends the session (back to sign-in).
 */
export function failureText(err: unknown, fallback: string): string {
  if (!(err instanceof AgentexecError) || err.code === 'network') return fallback;
  if (err.status === 401) reportSessionEnded(err.status, { code: err.code, message: err.message });
  const fields = err.details?.fields as Record<string, string> | undefined;
  if (fields && Object.keys(fields).length) return Object.entries(fields).map(([field, problem]) => `${field} ${problem}.`).join(' ');
  return errorMessage(err);
}

export interface Loaded<T> {
  value: T | undefined;
  error: string | undefined;
  reload(): void;
}

/** Loads `load()` when `deps` change (and on reload()), dropping the answers of loads overtaken by a newer one. */
export function useLoaded<T>(load: () => Promise<T>, deps: unknown[], failure: string): Loaded<T> {
  const [value, setValue] = useState<T | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let current = true;
    setError(undefined);
    load().then(
      (answer) => current && setValue(answer),
      (err: unknown) => current && setError(failureText(err, failure)),
    );
    return () => void (current = false);
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((n) => n + 1), []);
  return { value, error, reload };
}

/** How a page's last change went, as its status line says it. */
export interface ChangeStatus {
  text: string;
  failed: boolean;
}

/**
 * A page's changes: `change(what, failure)` runs `what` (which answers what to say), says how it went,
 * then reloads `loaded`; it answers whether the change was made.
 */
export function useChanges(loaded: { reload(): void }): { status: ChangeStatus | undefined; change(what: () => Promise<string>, failure: string): Promise<boolean> } {
  const [status, setStatus] = useState<ChangeStatus | undefined>();
  const change = async (what: () => Promise<string>, failure: string): Promise<boolean> => {
    setStatus(undefined);
    try {
      setStatus({ text: await what(), failed: false });
      return true;
    } catch (err) {
      setStatus({ text: failureText(err, failure), failed: true });
      return false;
    } finally {
      loaded.reload();
    }
  };
  return { status, change };
}

const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** A time for the console's tables, in the reader's zone, with the exact instant as its machine-readable value. */
export function formatTime(iso: string): string {
  return when.format(new Date(iso));
}
