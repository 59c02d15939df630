import { z } from 'zod';
import { agentNamePattern } from '../../shared/api.js';

export const jsonObject = z.record(z.string(), z.json());

/** Body of /api/exec/execAgent (spec 2.1). */
export const execAgentBody = z.strictObject({
  agentName: z.string().regex(agentNamePattern, 'must start with a letter and hold at most 64 letters, digits, _ or -'),
  inputs: jsonObject.optional(),
  convid: z.uuid('must be a conversation id from an earlier response').optional(),
  stream: z.boolean().optional(),
});

export type ExecAgentBody = z.infer<typeof execAgentBody>;
