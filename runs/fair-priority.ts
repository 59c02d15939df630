/**
 * Fair start of waiting runs across callers (DESIGN §16), as BullMQ priorities. A run is queued with
 * the priority of its place among its caller's runs in flight (queued or running, counted by the
 * admission, runs/run-slots.ts) divided by the caller's weight: a caller's k-th run in flight waits
 * behind every other caller's runs with a smaller place. A caller with one waiting run starts it
 * before the second of another caller's 5,000, and a caller of weight 2 starts two runs for another's
 * one. Within one priority BullMQ keeps arrival order, so a caller's own runs start in the order they
 * came; calls on one conversation keep their order through its turn queue whatever their priority.
 *
 * A run of the first place (priority 1) goes to BullMQ's unprioritized list, which BullMQ takes from
 * before its prioritized set, in arrival order: the same order as priority 1, at fewer Redis commands
 * (no priority counter, sorted set or extra wake-up of the worker: about 8 of a queued call's 72).
 * Only a caller with several runs in flight pays for priorities.
 */

/** The largest priority BullMQ takes (2^21 - 1). */
export const maxPriority = 2 ** 21 - 1;

/** The priority of a caller's run that is its `inFlight`-th run in flight (1 for the first), at `weight`. */
export function fairPriority(inFlight: number, weight: number): number {
  const place = Math.ceil(Math.max(1, inFlight) / Math.max(1, weight));
  return Math.min(maxPriority, place);
}

/** The BullMQ job option for a run of this priority: none for the first place (see above). */
export function queuePriority(priority: number): { priority?: number } {
  return priority > 1 ? { priority } : {};
}
