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
  /**
   * A call on a conversation with a run queued or running (DESIGN §16): `enqueue` waits its turn (the
   * default), `reject` is refused 409 conversationBusy with nothing queued, `interrupt` stops those
   * runs (they end `stopped`, keeping nothing) and runs next.
   */
  ifBusy: z.enum(['enqueue', 'reject', 'interrupt'], 'must be enqueue, reject or interrupt').optional(),
});

export type ExecAgentBody = z.infer<typeof execAgentBody>;

/**
 * Body of /api/exec/execAgentStream: the execAgent body, always streamed (`stream`, if sent, must be
 * true). The same call as execAgent with `stream: true`, under a path of its own so that the OpenAPI
 * document gives each path one kind of 200 (JSON, or events) and generated clients need no narrowing.
 */
export const execAgentStreamBody = execAgentBody.extend({ stream: z.literal(true, 'must be true (or left out): this endpoint always streams').optional() });

/** Body of /api/exec/submit (DESIGN §14): the execAgent body; a background run does not stream. */
export const submitBody = execAgentBody.omit({ stream: true });

const runId = z.uuid('must be a runId from an earlier answer');

/** Body of /api/exec/cancel: the conversation, the run, or the request id (X-Request-Id or Idempotency-Key) of the call. */
export const cancelBody = z
  .strictObject({
    convid: convid.optional(),
    runId: runId.optional(),
    requestId: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, 'must be the X-Request-Id or Idempotency-Key the call was sent with').optional(),
  })
  .refine((body) => [body.convid, body.runId, body.requestId].filter((v) => v !== undefined).length === 1, 'send one of convid, runId or requestId');

/** Body of /api/exec/attach: the conversation (your last streamed call on it) or the run. */
export const attachBody = z
  .strictObject({ convid: convid.optional(), runId: runId.optional() })
  .refine((body) => (body.convid === undefined) !== (body.runId === undefined), 'send either convid or runId');

/** Body of /api/exec/getRun. */
export const getRunBody = z.strictObject({ runId });

/** Body of /api/exec/wait: how long to wait at most, in ms (≤ 60,000; 30,000 when not given). */
export const waitBody = z.strictObject({ runId, timeoutMs: z.number().int().min(0).max(60_000).optional() });
