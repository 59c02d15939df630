import { abortFetch, createFetchAbort, type FetchAbort } from './fetch-abort.js';

/**
 * The sys.fetch requests one run may have in flight (DESIGN §12): the first 16 go at once, later ones
 * wait for a free slot, first come first served. One per run, made with its session and closed as the
 * run ends. Each slot is its request's own FetchAbort, aborted when the run ends, so no listener is
 * added per fetch to a signal shared by the run (a run may have up to 1,000 fetches waiting, and
 * EventTarget listeners cost O(n) to add), and no AbortSignal is held per waiting fetch (fetch-abort.ts).
 */

export const maxFetchesInFlight = 16;

export interface FetchSlots {
  limit: number;
  /** One per request holding a slot. */
  held: Set<FetchAbort>;
  /** Grants for the fetches waiting for a slot, oldest first. */
  waiting: Array<(slot: FetchAbort) => void>;
  /** Set as the run ends: nothing waiting starts any more. */
  closed: boolean;
}

export function createFetchSlots(limit = maxFetchesInFlight): FetchSlots {
  return { limit, held: new Set(), waiting: [], closed: false };
}

/**
 * A slot, at once or when one is released; its signal aborts when the run ends. Once the run has
 * ended it never resolves: the isolate is gone and nothing waits for the answer.
 */
export function takeFetchSlot(slots: FetchSlots): Promise<FetchAbort> {
  if (slots.closed) return new Promise(() => {});
  if (slots.held.size < slots.limit) return Promise.resolve(holdSlot(slots));
  return new Promise((grant) => slots.waiting.push(grant));
}

/** Frees the slot; the oldest waiting fetch gets it. Releasing twice, or after the run ended, does nothing. */
export function releaseFetchSlot(slots: FetchSlots, slot: FetchAbort): void {
  if (!slots.held.delete(slot)) return;
  slots.waiting.shift()?.(holdSlot(slots));
}

/** The run ended: the requests in flight are aborted and the waiting ones never start. */
export function closeFetchSlots(slots: FetchSlots): void {
  slots.closed = true;
  slots.waiting.length = 0;
  for (const slot of slots.held) abortFetch(slot);
  slots.held.clear();
}

function holdSlot(slots: FetchSlots): FetchAbort {
  const slot = createFetchAbort();
  slots.held.add(slot);
  return slot;
}
