import { z } from 'zod';
import * as api from '../../shared/api.schemas.js';
import { decodeRunCursor } from './run-cursor.js';

/** Runs a page of listRuns holds when the body gives no `limit`, and at most. */
export const defaultRunPageSize = 50;
export const maxRunPageSize = 100;

const dateTime = z.iso
  .datetime({ offset: true, message: 'must be an ISO date-time such as 2025-01-31T00:00:00Z' })
  .transform((value) => new Date(value));

/** Body of /api/admin/listRuns (DESIGN §18): filters, all optional, and where the page starts. */
export const listRunsBody = z
  .strictObject({
    agentName: z.string().min(1, 'must not be empty').optional().describe('Only runs of this agent name (drafts included).'),
    account: z
      .strictObject({ kind: api.principalKind, id: z.uuid('must be a UUID') })
      .optional()
      .describe('Only runs called by this account: a user or a service account, by id.'),
    resultCode: api.resultCode.optional().describe('Only runs that ended with this resultCode.'),
    from: dateTime.optional().describe('Only runs started at or after this time.'),
    to: dateTime.optional().describe('Only runs started before this time.'),
    cursor: z
      .string()
      .refine((value) => decodeRunCursor(value) !== undefined, 'is not a cursor this server gave')
      .optional()
      .describe('nextCursor of the page before; the first page without it.'),
    limit: z
      .number('must be a whole number')
      .int(`must be a whole number from 1 to ${maxRunPageSize}`)
      .min(1, `must be a whole number from 1 to ${maxRunPageSize}`)
      .max(maxRunPageSize, `must be a whole number from 1 to ${maxRunPageSize}`)
      .optional()
      .describe(`Runs per page (default ${defaultRunPageSize}).`),
  })
  .refine((body) => !body.from || !body.to || body.from.getTime() < body.to.getTime(), { message: 'must be after from', path: ['to'] });

/** One run of the list: an ended run's record (never its inputs, output or answers). */
export const runListEntry = z.object({
  runId: z.uuid(),
  convid: z.uuid(),
  agentName: z.string(),
  agentVersion: z.number().int().nullable().describe('The published version that ran; for a draft validation, the draft revision; null when it never ran.'),
  draftId: z.string().nullable().describe('Set for a draft validation run.'),
  account: z.object({ kind: api.principalKind, id: z.uuid(), name: z.string().optional(), email: z.string().optional() }).describe('Who called it: name for a service account, email for a user (absent once deleted).'),
  requestId: z.string().nullable(),
  resultCode: api.resultCode,
  errorMessage: z.string().nullable(),
  background: z.boolean().describe('Started with submit.'),
  submittedAt: z.iso.datetime().nullable(),
  startedAt: z.iso.datetime(),
  finishedAt: z.iso.datetime(),
  durationMs: z.number().int(),
});

/** What /api/admin/listRuns answers. */
export const runListAnswer = z.object({
  runs: z.array(runListEntry).describe('Newest first (by start, then run id).'),
  nextCursor: z.string().nullable().describe('Pass as cursor for the next (older) page; null on the last page.'),
});
