import { getNextMillis } from 'bullmq';

/**
 * When a schedule fires (DESIGN §19): a cron expression of 5 fields, or 6 with seconds first, in an
 * IANA time zone, read by the same parser BullMQ's job schedulers use (its getNextMillis, cron-parser),
 * so what is accepted here is what the scheduler computes.
 */

export const defaultTimeZone = 'UTC';

/** The longest cron expression and time zone name taken (far more than any real one). */
const maxCronLength = 200;
const maxTimeZoneLength = 64;

/** The next firing (epoch ms) after `after` of `cron` in `tz`; undefined when it never fires again. */
export function nextFiring(cron: string, tz: string, after = Date.now()): number | undefined {
  return getNextMillis(after, { pattern: cron, tz });
}

/** Why `cron` is not a schedule's cron expression, or undefined when it is one. */
export function cronProblem(cron: string): string | undefined {
  const fields = cron.trim().split(/\s+/);
  if (cron.length > maxCronLength || (fields.length !== 5 && fields.length !== 6)) return 'must be a cron expression of 5 fields, or 6 with seconds first';
  let next: number | undefined;
  try {
    next = nextFiring(cron, defaultTimeZone);
  } catch (err) {
    return `is not a cron expression BullMQ reads: ${(err as Error).message}`;
  }
  return next === undefined ? 'never fires' : undefined;
}

/** Why `tz` is not an IANA time zone, or undefined when it is one. */
export function timeZoneProblem(tz: string, cron: string): string | undefined {
  const problem = 'must be an IANA time zone, such as UTC or Europe/Paris';
  if (tz.length === 0 || tz.length > maxTimeZoneLength) return problem;
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    // The scheduler's own parser must read it too (it refuses some zones Intl takes, such as offsets).
    nextFiring(cronProblem(cron) === undefined ? cron : '* * * * *', tz);
  } catch {
    return problem;
  }
  return undefined;
}
