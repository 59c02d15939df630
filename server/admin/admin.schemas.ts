import { z } from 'zod';
import type { ReportRange } from '../../db/usage.repository.js';
import { limitRule, maxLimit } from '../../runs/caller-limits.js';

const dateTime = z.iso
  .datetime({ offset: true, message: 'must be an ISO date-time such as 2025-01-31T00:00:00Z' })
  .transform((value) => new Date(value));

/** Body of /api/admin/usageReport and /api/admin/errorReport. */
export const reportBody = z.strictObject({ since: dateTime.optional(), until: dateTime.optional() });

/** Which set of the agent name's secrets a call is about (shared/agent-secrets.ts SecretSet). */
const forDrafts = z.boolean().optional().describe("true: the secrets the agent name's drafts read (and nothing else); false or left out: those its published versions read");

/** Bodies of /api/admin/setSecret, deleteSecret and listSecrets (DESIGN §13); names are checked by runs/agent-secrets.ts. */
export const setSecretBody = z.strictObject({ agentName: z.string(), key: z.string(), value: z.string(), forDrafts });
export const deleteSecretBody = z.strictObject({ agentName: z.string(), key: z.string(), forDrafts });
export const listSecretsBody = z.strictObject({ agentName: z.string(), forDrafts });

/** How far back a report goes when `since` is not given. */
export const defaultReportDays = 30;

/**
 * The range a report covers: `until` defaults to now, `since` to `defaultReportDays` before `until`.
 * Returns undefined when `since` is after `until`.
 */
export function resolveReportRange(given: { since?: Date | undefined; until?: Date | undefined }, now: Date): ReportRange | undefined {
  const until = given.until ?? now;
  const since = given.since ?? new Date(until.getTime() - defaultReportDays * 24 * 60 * 60 * 1000);
  return since.getTime() > until.getTime() ? undefined : { since, until };
}

/** An account named by an admin: a service account by `name`, or a user by `email` (exactly one). */
const accountFields = { name: z.string().min(1).optional().describe('A service account, by name.'), email: z.string().min(1).optional().describe('A user, by email.') };
const oneAccount = (body: { name?: string | undefined; email?: string | undefined }) => (body.name === undefined) !== (body.email === undefined);
const oneAccountRule = { message: 'send either name (a service account) or email (a user)', path: ['name'] };

const limitCount = (what: string) =>
  z
    .number('must be a whole number')
    .int(limitRule('runsPerMinute'))
    .min(0, limitRule('runsPerMinute'))
    .max(maxLimit, limitRule('runsPerMinute'))
    .nullable()
    .optional()
    .describe(`${what}; 0 = no limit; null = back to the default from config.`);

/** Body of /api/admin/setLimits (DESIGN §16): the limits to change, the others left as they are. */
export const setLimitsBody = z
  .strictObject({
    ...accountFields,
    runsPerMinute: limitCount('Runs started per minute'),
    runsInFlight: limitCount('Runs queued or running at once'),
    weight: z
      .number('must be a whole number')
      .int(limitRule('weight'))
      .min(1, limitRule('weight'))
      .max(maxLimit, limitRule('weight'))
      .nullable()
      .optional()
      .describe("Share of the workers when others' runs wait too; null = back to the default (1)."),
  })
  .refine(oneAccount, oneAccountRule);

/** Body of /api/admin/getLimits. */
export const getLimitsBody = z.strictObject(accountFields).refine(oneAccount, oneAccountRule);

/** What setLimits and getLimits answer: the limits that hold for the account, and which are the defaults. */
export const limitsAnswer = z.object({
  account: z.object({ kind: z.enum(['user', 'serviceAccount']), id: z.uuid(), name: z.string().optional(), email: z.string().optional() }),
  limits: z.object({ runsPerMinute: z.number().int(), runsInFlight: z.number().int(), weight: z.number().int() }),
  defaults: z.array(z.enum(['runsPerMinute', 'runsInFlight', 'weight'])).describe('The limits that are the defaults from config (none set for this account).'),
});

/** What /api/admin/callerLoad answers: the top callers by runs in flight plus refusals in the last minute. */
export const callerLoadAnswer = z.object({
  callers: z.array(
    z.object({
      kind: z.enum(['user', 'serviceAccount']),
      id: z.uuid(),
      name: z.string().optional(),
      email: z.string().optional(),
      inFlight: z.number().int().describe('Runs queued or running now.'),
      refusedLastMinute: z.number().int().describe('Calls refused 429 rateLimited in the last minute.'),
    }),
  ),
});
