import { z } from 'zod';
import { agentNamePattern } from '../../shared/api.js';
import { jsonObject } from '../exec/exec.schemas.js';

const draftid = z.uuid('must be a draft id from saveDraft');

/** The largest draft source accepted, in characters (the body limit applies too). */
export const maxDraftSourceLength = 500_000;

/** Body of /api/dev/saveDraft: without draftid a new draft, with it a new revision of that draft. */
export const saveDraftBody = z.strictObject({
  draftid: draftid.optional(),
  agentName: z.string().regex(agentNamePattern, 'must start with a letter and hold at most 64 letters, digits, _ or -'),
  source: z.string().max(maxDraftSourceLength, `must be at most ${maxDraftSourceLength} characters`),
  validationQuery: z.string().max(10_000, 'must be at most 10000 characters'),
});

export type SaveDraftBody = z.infer<typeof saveDraftBody>;

/** Body of /api/dev/getDraft and /api/dev/publishDraft. */
export const draftBody = z.strictObject({ draftid });

/** Body of /api/dev/listAgents. */
export const listAgentsBody = z.strictObject({});

/** Body of /api/dev/validateDraftStream: the draftid plus the fields of execAgent (spec §4). */
export const validateDraftBody = z.strictObject({
  draftid,
  inputs: jsonObject.optional(),
  convid: z.uuid('must be a conversation id from an earlier response').optional(),
  stream: z.boolean().optional(),
});

export type ValidateDraftBody = z.infer<typeof validateDraftBody>;
