/**
 * What ends a request early (its run's end: fetch-slots.ts), in place of an AbortSignal. A waiting
 * run holds one for each fetch it has in flight, for as long as the answer takes: an AbortSignal,
 * once read, is an EventTarget with two Maps (some 0.8 KB, 0.9 KB with its listener); this is one
 * small object, and an array only while something listens. A request has one or two listeners at a
 * time (its wait for the head, then its streamed body's).
 */
export interface FetchAbort {
  aborted: boolean;
  listeners: (() => void)[] | null;
}

export function createFetchAbort(): FetchAbort {
  return { aborted: false, listeners: null };
}

/** Calls `listener` once when `abort` is aborted; returns the function that stops listening. Not called if aborted already: check `aborted` first. */
export function onFetchAbort(abort: FetchAbort, listener: () => void): () => void {
  (abort.listeners ??= []).push(listener);
  return () => {
    const at = abort.listeners?.indexOf(listener) ?? -1;
    if (at >= 0) abort.listeners!.splice(at, 1);
  };
}

/** Aborts: each listener is called once. Aborting twice does nothing. */
export function abortFetch(abort: FetchAbort): void {
  if (abort.aborted) return;
  abort.aborted = true;
  const listeners = abort.listeners ?? [];
  abort.listeners = null;
  for (const listener of listeners) listener();
}
