import { z } from 'zod';
import type { ReportRange } from '../../db/usage.repository.js';

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
