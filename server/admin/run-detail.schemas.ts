import { z } from 'zod';
import * as api from '../../shared/api.schemas.js';

/** Body of /api/admin/getRun and /api/admin/cancelRun. */
export const adminRunBody = z.strictObject({ runId: z.uuid('must be a run id (a UUID)') });

const at = z.iso.datetime();

/** One entry of a run's timeline (shared/run-timeline.ts). */
export const timelineEntry = z
  .discriminatedUnion('kind', [
    z.object({
      kind: z.literal('fetch'),
      at,
      method: z.string(),
      url: z.string().describe('Without its query or fragment; secret values masked.'),
      status: z.number().int().nullable().describe('The HTTP status; null when the request failed.'),
      error: z.string().nullable().describe('Why the request failed (no response).'),
      durationMs: z.number().int().describe('From the call to the response headers (or the failure), waiting for a fetch slot included.'),
    }),
    z.object({ kind: z.literal('ask'), at, message: z.string() }),
    z.object({ kind: z.literal('log'), at, text: z.string().describe('sys.log or console.log; secret values and password answers masked.') }),
    z.object({ kind: z.literal('truncated'), at }).describe('The run did more than the 200 entries kept.'),
  ])
  .describe('What a run did, in order: each live sys.fetch, ask and log line (replayed calls are not repeated).');

/** What /api/admin/getRun answers: any caller's run, queued, running or ended. */
export const adminRunAnswer = z.object({
  runId: z.uuid(),
  convid: z.uuid(),
  agentName: z.string(),
  status: z.enum(['queued', 'running', 'ended']),
  account: z.object({ kind: api.principalKind, id: z.uuid(), name: z.string().optional(), email: z.string().optional() }).describe('Who called it: name for a service account, email for a user (absent once deleted).'),
  agentVersion: z.number().int().nullable().describe('The published version that ran (a draft validation: the draft revision); null until it ran, or when it never did.'),
  draftId: z.string().nullable(),
  requestId: z.string().nullable(),
  background: z.boolean().describe('Started with submit.'),
  submittedAt: at.nullable().describe('When it was queued; null for records made before this was kept.'),
  startedAt: at.nullable().describe('When a worker started it; null while queued.'),
  finishedAt: at.nullable(),
  durationMs: z.number().int().nullable(),
  resultCode: api.resultCode.nullable(),
  errorMessage: z.string().nullable().describe('What the error report says of a failed run.'),
  response: api.executionResponse.nullable().describe('The execution response, output included, once ended.'),
  traceId: z.string().nullable().describe('The OpenTelemetry trace id of the run; null when its process did not trace.'),
  timeline: z.array(timelineEntry).describe('Empty until it ended, or when it fetched, asked and logged nothing.'),
});
