import { z } from 'zod';

const convid = z.uuid('must be a conversation id from an earlier response');

/** Body of /api/conv/pin. */
export const pinBody = z.strictObject({ convid, pinned: z.boolean() });

/** Body of /api/conv/list: a page of at most `limit`, used before `before` (the last page's oldest lastUsedAt). */
export const listBody = z.strictObject({
  limit: z.number().int().min(1).max(200).optional(),
  before: z.iso.datetime({ offset: true, message: 'must be an ISO date-time' }).optional(),
});

/** Body of /api/conv/get: the conversation, and a page of its turns (the last `limit` that started before `before`). */
export const getBody = z.strictObject({
  convid,
  limit: z.number().int().min(1).max(500).optional(),
  before: z.iso.datetime({ offset: true, message: 'must be an ISO date-time (the `at` of the oldest turn you have)' }).optional(),
});
