import { z } from 'zod';
import * as api from '../../shared/api.schemas.js';
import { timelineEntry } from '../../shared/run-timeline.js';

/** Body of /api/admin/getRun and /api/admin/cancelRun. */
export const adminRunBody = z.strictObject({ runId: z.uuid('must be a run id (a UUID)') });

const at = z.iso.datetime();

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
  parentRunId: z.uuid().nullable().describe("A child run's parent: the run whose agent called this one with sys.call; null for any other run."),
});
