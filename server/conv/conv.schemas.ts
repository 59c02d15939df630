import { z } from 'zod';

const convid = z.uuid('must be a conversation id from an earlier response');

/** Body of /api/conv/pin. */
export const pinBody = z.strictObject({ convid, pinned: z.boolean() });

/** Body of /api/conv/list: a page of at most `limit`, used before `before` (the last page's oldest lastUsedAt). */
export const listBody = z.strictObject({
  limit: z.number().int().min(1).max(200).optional(),
  before: z.iso.datetime({ offset: true, message: 'must be an ISO date-time' }).optional(),
});
