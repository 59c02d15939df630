import type { Principal } from '../shared/api.js';
import { callerName } from '../shared/channels.js';
import type { CallerLimits } from './caller-limits.js';

/**
 * Each caller's runs in flight as this process last heard from Redis (every admission there answers
 * the count), so that a short run it may answer itself (a web process's new conversation, a worker's
 * child of sys.call) needs no round trip to Redis: such a run lasts a few milliseconds and adds
 * nothing to the count that lasts (DESIGN §16).
 * A view older than `maxAgeMs` is not used; the next admission through Redis refreshes it.
 */
export interface InFlightView {
  /** The caller's count, when this process heard it within `maxAgeMs`. */
  recent(caller: Pick<Principal, 'kind' | 'id'>): number | undefined;
  heard(caller: Pick<Principal, 'kind' | 'id'>, inFlight: number): void;
}

/**
 * Whether a short run's place must be taken in Redis after all: a per-minute limit (every run counts),
 * or runs in flight not heard of lately, or no room left under runsInFlight as last heard.
 */
export function needsCounting(limits: Pick<CallerLimits, 'runsPerMinute' | 'runsInFlight'>, recentInFlight: number | undefined): boolean {
  if (limits.runsPerMinute > 0 || recentInFlight === undefined) return true;
  return limits.runsInFlight > 0 && recentInFlight + 1 > limits.runsInFlight;
}

export const inFlightViewMaxAgeMs = 1_000;
/** Past this many callers the view starts again empty (a bound on memory). */
const maxEntries = 10_000;

export function createInFlightView(maxAgeMs = inFlightViewMaxAgeMs, now: () => number = Date.now): InFlightView {
  const views = new Map<string, { inFlight: number; at: number }>();
  return {
    recent(caller) {
      const view = views.get(callerName(caller));
      return view && now() - view.at < maxAgeMs ? view.inFlight : undefined;
    },
    heard(caller, inFlight) {
      if (views.size >= maxEntries) views.clear();
      views.set(callerName(caller), { inFlight, at: now() });
    },
  };
}
