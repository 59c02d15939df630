import { z } from 'zod';
import { agentNamePattern } from '../../shared/api.js';

export const jsonObject = z.record(z.string(), z.json());

const convid = z.uuid('must be a conversation id from an earlier response');

/** Body of /api/exec/execAgent (spec 2.1). */
export const execAgentBody = z.strictObject({
  agentName: z.string().regex(agentNamePattern, 'must start with a letter and hold at most 64 letters, digits, _ or -'),
  inputs: jsonObject.optional(),
  convid: convid.optional(),
  stream: z.boolean().optional(),
});

export type ExecAgentBody = z.infer<typeof execAgentBody>;

/** Body of /api/exec/cancel: the conversation, or the request id (X-Request-Id or Idempotency-Key) of the call. */
export const cancelBody = z
  .strictObject({
    convid: convid.optional(),
    requestId: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, 'must be the X-Request-Id or Idempotency-Key the call was sent with').optional(),
  })
  .refine((body) => (body.convid === undefined) !== (body.requestId === undefined), 'send either convid or requestId');

/** Body of /api/exec/attach. */
export const attachBody = z.strictObject({ convid });
