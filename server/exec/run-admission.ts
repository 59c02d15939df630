import { shardsOf } from '../../shared/shards.js';
import type { Principal } from '../../shared/api.js';
import { AppError } from '../../shared/errors.js';
import { minuteMs, minuteWindow, releaseRunSlot, slotLeftoverAfterMs, takeRunSlot, type SlotAnswer } from '../../runs/run-slots.js';
import { fairPriority } from '../../runs/fair-priority.js';
import { needsCounting } from '../../runs/in-flight-view.js';
import type { WebDeps } from '../deps.js';

/**
 * The limits per caller at the door (DESIGN §16): every call that would start a run takes a place
 * among its caller's runs in flight first (one Redis round trip, runs/run-slots.ts), and is refused
 * 429 `rateLimited` with nothing started when a limit is reached. The headers are the IETF draft
 * "RateLimit header fields for HTTP" (structured fields): `RateLimit-Policy` names each limit that
 * applies, `RateLimit` what is left of it and in how many seconds it resets.
 */

/** A call's place, and the headers its answer carries (empty when no per-minute limit applies). */
export interface Admission {
  headers: Record<string, string>;
  /** The run's priority in the queue: its place among its caller's runs in flight, by weight (runs/fair-priority.ts). */
  priority: number;
}

/**
 * Admits a run this process may answer itself (a short run on a new conversation) without Redis when
 * nothing needs counting there: the caller has no per-minute limit, and its runs in flight, as
 * recently heard, leave room. Such a run is over in milliseconds; its place in flight would be taken
 * and given back at twice the Redis round trips the run itself costs (13 commands a call, measured).
 * Undefined otherwise: admit it with admitRun, as every run that goes to the queue is.
 */
export async function admitShortRun(deps: WebDeps, caller: Pick<Principal, 'kind' | 'id'>): Promise<Admission | undefined> {
  const limits = await deps.callerLimits.get(caller);
  if (needsCounting(limits, deps.inFlight.recent(caller))) return undefined;
  return { headers: {}, priority: 1 };
}

/** Takes the run's place for its caller, or throws 429 rateLimited (nothing taken). */
export async function admitRun(deps: WebDeps, caller: Pick<Principal, 'kind' | 'id'>, runId: string): Promise<Admission> {
  const limits = await deps.callerLimits.get(caller);
  // Counted also when no limit applies: the count is the run's place for fair share.
  const now = Date.now();
  let answer: SlotAnswer;
  try {
    answer = await takeRunSlot(deps.redis, shardsOf(deps.config), caller, runId, limits, slotLeftoverAfterMs(deps.config), now);
  } catch (err) {
    // Redis unreachable: the limits cannot be counted, and the call is let through uncounted rather
    // than refused, so the short runs this process answers itself go on meanwhile (a queued run
    // needs Redis anyway, and is refused 503 when it cannot be queued).
    deps.logger.warn({ err: String(err) }, 'limits per caller not counted: Redis unreachable');
    return { headers: {}, priority: 1 };
  }
  deps.inFlight.heard(caller, answer.inFlight);
  const resetSeconds = Math.max(1, Math.ceil(((minuteWindow(now) + 1) * minuteMs - now) / 1000));
  const policies: string[] = [];
  const left: string[] = [];
  if (limits.runsPerMinute > 0) {
    policies.push(`"minute";q=${limits.runsPerMinute};w=60`);
    left.push(`"minute";r=${Math.max(0, limits.runsPerMinute - answer.usedInMinute)};t=${resetSeconds}`);
  }
  if (answer.admitted) {
    const headers: Record<string, string> = policies.length ? { 'RateLimit-Policy': policies.join(', '), RateLimit: left.join(', ') } : {};
    return { headers, priority: fairPriority(answer.inFlight, limits.weight) };
  }
  deps.metrics.runsRefused.inc({ limit: answer.refusedBy });
  // A place in flight frees when one of the caller's runs ends: no time is known, so a second.
  const retryAfterSeconds = answer.refusedBy === 'runsPerMinute' ? resetSeconds : 1;
  if (answer.refusedBy === 'runsInFlight') {
    policies.push(`"inflight";q=${limits.runsInFlight};qu="concurrent-requests"`);
    left.push(`"inflight";r=0;t=1`);
  }
  throw new AppError('rateLimited', refusal(answer, limits.runsPerMinute, limits.runsInFlight), { retryAfterSeconds, limit: answer.refusedBy }, {
    'RateLimit-Policy': policies.join(', '),
    RateLimit: left.join(', '),
  });
}

function refusal(answer: Extract<SlotAnswer, { admitted: false }>, perMinute: number, inFlight: number): string {
  return answer.refusedBy === 'runsPerMinute'
    ? `You have started ${perMinute} runs this minute, your limit; try again when the minute is over.`
    : `You have ${inFlight} runs queued or running, your limit; try again when one has ended.`;
}

/** Gives back a place taken for a run that will not run after all, or that this process ran itself. */
export function releaseRun(deps: WebDeps, caller: Pick<Principal, 'kind' | 'id'>, runId: string): void {
  releaseRunSlot(deps.redis, shardsOf(deps.config), caller, runId).catch((err: unknown) => deps.logger.warn({ err: String(err), runId }, 'run place not given back; it lapses'));
}
