/**
 * The sys.fetch requests one run may have in flight (DESIGN §12): the first 16 go at once, later ones
 * wait for a free slot, first come first served. One per run, made with its session and closed as the
 * run ends. Each slot carries its own AbortController, aborted when the run ends, so no listener is
 * added per fetch to a signal shared by the run (a run may have up to 1,000 fetches waiting, and
 * EventTarget listeners cost O(n) to add).
 */

export const maxFetchesInFlight = 16;

export interface FetchSlots {
  limit: number;
  /** One controller per request holding a slot. */
  held: Set<AbortController>;
  /** Grants for the fetches waiting for a slot, oldest first. */
  waiting: Array<(slot: AbortController) => void>;
  /** Set as the run ends: nothing waiting starts any more. */
  closed: boolean;
}

/** The reason every slot is aborted with (a given reason spares building a DOMException per request). */
const runEnded = new Error('the run has ended');

export function createFetchSlots(limit = maxFetchesInFlight): FetchSlots {
  return { limit, held: new Set(), waiting: [], closed: false };
}

/**
 * A slot, at once or when one is released; its signal aborts when the run ends. Once the run has
 * ended it never resolves: the isolate is gone and nothing waits for the answer.
 */
export function takeFetchSlot(slots: FetchSlots): Promise<AbortController> {
  if (slots.closed) return new Promise(() => {});
  if (slots.held.size < slots.limit) return Promise.resolve(holdSlot(slots));
  return new Promise((grant) => slots.waiting.push(grant));
}

/** Frees the slot; the oldest waiting fetch gets it. Releasing twice, or after the run ended, does nothing. */
export function releaseFetchSlot(slots: FetchSlots, slot: AbortController): void {
  if (!slots.held.delete(slot)) return;
  slots.waiting.shift()?.(holdSlot(slots));
}

/** The run ended: the requests in flight are aborted and the waiting ones never start. */
export function closeFetchSlots(slots: FetchSlots): void {
  slots.closed = true;
  slots.waiting.length = 0;
  for (const slot of slots.held) slot.abort(runEnded);
  slots.held.clear();
}

function holdSlot(slots: FetchSlots): AbortController {
  const slot = new AbortController();
  slots.held.add(slot);
  return slot;
}
