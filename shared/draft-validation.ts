import { z } from 'zod';
import { executionResponse } from './api.schemas.js';
import { traceEvent } from './trace.js';

/** A compile error at its place in the draft's own source (1-based). */
export const compileErrorSchema = z.object({ line: z.number().int().min(1), column: z.number().int().min(1), message: z.string() });

/** What the agent threw, at its place in the draft's own source, with the stack pointing there too. */
export const runtimeErrorSchema = z.object({
  message: z.string(),
  line: z.number().int().min(1).nullable(),
  column: z.number().int().min(1).nullable(),
  stack: z.string(),
});

/**
 * What a draft validation adds to the execution response (spec 2.4): `validationSuccess` is true when
 * the draft compiled and its run ended `success` or `ask`. `trace` comes only in a non-streamed
 * answer; a stream sends the same events as `trace` events as they happen.
 */
export const validationFieldsSchema = z.object({
  validationSuccess: z.boolean(),
  compileErrors: z.array(compileErrorSchema),
  runtimeError: runtimeErrorSchema.nullable(),
  trace: z.array(traceEvent).optional(),
});

/** The answer of /api/dev/validateDraftStream (non-streamed). */
export const validationResponse = executionResponse.extend(validationFieldsSchema.shape);

/** The `end` event of a streamed validation: the answer without output and trace (they went out as events). */
export const validationStreamEnd = validationResponse.omit({ output: true, trace: true });

// The answers of the other draft endpoints (DESIGN §5).
const draftid = z.uuid();
const time = z.iso.datetime({ offset: true });
export const savedDraft = z.object({ draftid, compileErrors: z.array(compileErrorSchema) });
export const draftAnswer = z.object({
  draftid,
  agentName: z.string(),
  source: z.string(),
  validationQuery: z.string(),
  compileErrors: z.array(compileErrorSchema),
  revision: z.number().int().min(1),
  updatedAt: time,
});
export const publishedDraft = z.object({ agentName: z.string(), version: z.number().int().min(1) });
export const agentList = z.object({
  agents: z.array(z.object({ agentName: z.string(), version: z.number().int().min(1), publishedAt: time })),
  drafts: z.array(z.object({ draftid, agentName: z.string(), compiles: z.boolean(), updatedAt: time })).describe('The newest 200 drafts, newest first.'),
});

export type RuntimeError = z.infer<typeof runtimeErrorSchema>;
export type ValidationFields = z.infer<typeof validationFieldsSchema>;
