import { z } from 'zod';
import { errorStatus, type ErrorCode } from './errors.js';

/**
 * Every body the HTTP API answers (spec §2, DESIGN §2-§7), as zod schemas. shared/api.ts derives the
 * TypeScript types from them and /api/openapi.json documents them, so each shape is written once.
 * They describe the JSON on the wire: times are ISO strings (`toISOString`, always UTC), as Koa
 * serialises the Dates of a handler's body.
 */

const isoTime = z.iso.datetime();
const count = z.number().int().min(0);
const position = z.number().int().min(1);

// Callers (DESIGN §3).
export const principalKind = z.enum(['user', 'serviceAccount']);
export const role = z.enum(['user', 'developer', 'admin']);
export const plan = z.enum(['free', 'paid']);

// Execution (spec §2, DESIGN §4).
export const resultCode = z.enum(['success', 'ask', 'callFailed', 'failCommand', 'errorInAgent', 'unknownConversation', 'timedOut', 'stopped', 'mustLogin', 'unexpected']);

export const outputPart = z
  .union([
    z.object({ type: z.literal('text'), text: z.string().describe('Markdown') }),
    z.object({ type: z.literal('html'), html: z.string() }),
    z.object({ type: z.literal('image'), mimeType: z.string(), data: z.string().describe('base64') }),
    z.object({ type: z.literal('image'), mimeType: z.string(), url: z.string() }),
  ])
  .describe('One output part of a run.');

export const inputType = z.enum(['str', 'password', 'text', 'chooseOne', 'chooseMany']);

export const inputOption = z.object({ value: z.string(), label: z.string() });

export const inputDescriptor = z
  .object({
    name: z.string(),
    type: inputType,
    label: z.string().nullable(),
    description: z.string().nullable(),
    options: z.array(inputOption).nullable().describe('For chooseOne and chooseMany.'),
    default: z.union([z.string(), z.array(z.string())]).nullable(),
  })
  .describe('Every descriptor carries all six fields, null where the agent gave none.');

export const askInput = z.object({ message: z.string(), inputs: z.array(inputDescriptor) });

export const executionError = z
  .object({
    message: z.string(),
    line: position.optional().describe("1-based, in the agent's own source"),
    column: position.optional(),
    fields: z.record(z.string(), z.string()).optional().describe('Input name → what is wrong with the answer (an ask answered with missing or invalid values).'),
  })
  .describe('Only on a resultCode other than success, or on an ask answered wrongly.');

export const executionResponse = z.object({
  resultCode,
  convid: z.uuid(),
  agentName: z.string(),
  output: z.array(outputPart),
  askInput: askInput.optional().describe('Only when resultCode is ask.'),
  error: executionError.optional(),
});

/** Data of the stream events (DESIGN §4 Streaming); `part` carries an outputPart. */
export const streamStart = z.object({ convid: z.uuid(), agentName: z.string(), runId: z.uuid() });
export const streamDelta = z.object({ text: z.string().describe('Appended to the current text part.') });
export const streamEnd = executionResponse.omit({ output: true }).describe('The execution response without output (the parts went out as part and delta events).');

// Errors outside an execution result (DESIGN §2).
const errorCodes = Object.keys(errorStatus) as [ErrorCode, ...ErrorCode[]];

export const errorBody = z.object({
  error: z.object({
    code: z.enum(errorCodes),
    message: z.string(),
    details: z
      .looseObject({
        fields: z.record(z.string(), z.string()).optional().describe('invalidRequest: field → what is wrong with it.'),
        rules: z.array(z.string()).optional().describe('passwordRules: the ids of the rules the password breaks.'),
        sessionEnded: z.literal(true).optional().describe('unauthenticated: the session cookie named a session that has ended.'),
        retryAfterSeconds: count.optional().describe('rateLimited: also sent as Retry-After.'),
        limit: z.enum(['runsPerMinute', 'runsInFlight']).optional().describe('rateLimited by a limit per caller (DESIGN §16): which one.'),
      })
      .optional(),
  }),
});

// Sign-in and profile (DESIGN §3).
export const emptyAnswer = z.object({}).describe('An empty object.');

export const signedIn = z.object({ user: z.object({ id: z.uuid(), email: z.string(), callName: z.string(), role }) });

export const passwordHelpAnswer = z.object({
  rules: z.array(z.object({ id: z.string(), text: z.string() })),
  minLength: count.describe('In code points, after NFC normalisation.'),
  maxLength: count,
});

const profileFields = { id: z.uuid(), callName: z.string(), role, plan };
export const userProfile = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('user'), ...profileFields, email: z.string() }),
  z.object({ kind: z.literal('serviceAccount'), ...profileFields }),
]);

// Conversations (DESIGN §6) and cancel (DESIGN §4).
export const pinAnswer = z.object({ convid: z.uuid(), pinned: z.boolean() });

export const conversationSummary = z.object({
  convid: z.uuid(),
  pinned: z.boolean(),
  plan,
  createdAt: isoTime,
  lastUsedAt: isoTime,
  expiresAt: isoTime.nullable().describe('null while pinned'),
  pausedBy: z.string().nullable().describe('The agent whose ask the conversation waits on.'),
  title: z.string().nullable().describe('The query that started the conversation (its first one); null when none had a query.'),
  lastQuery: z.string().nullable(),
  lastAgentName: z.string().nullable(),
});

export const conversationList = z.object({ conversations: z.array(conversationSummary) });

export const cancelAnswer = z.object({ cancelled: z.boolean().describe('false when nothing of yours was going (a second cancel, or one after the end).') });

// Reports (DESIGN §7).
const reportRange = { since: isoTime, until: isoTime };
const truncated = z.boolean().describe('true when there were more than the 1,000 newest rows');

export const usageReport = z.object({
  ...reportRange,
  totals: z.array(
    z.object({ serviceAccountId: z.uuid(), name: z.string(), role, day: z.iso.date().describe('UTC'), calls: count, failed: count }),
  ),
  rows: z.array(
    z.object({
      serviceAccountId: z.uuid(),
      name: z.string(),
      role,
      endpoint: z.string(),
      agentName: z.string().nullable(),
      resultCode: resultCode.nullable(),
      httpStatus: z.number().int(),
      durationMs: count,
      at: isoTime,
    }),
  ),
  truncated,
});

export const errorReport = z.object({
  ...reportRange,
  totals: z
    .array(z.object({ day: z.iso.date().describe('UTC'), resultCode, count }))
    .describe('Every failed run of the range (not only the rows below) counted per UTC day and resultCode, oldest day first.'),
  rows: z.array(
    z.object({
      executionId: z.uuid(),
      convid: z.uuid(),
      agentName: z.string(),
      resultCode,
      message: z.string().nullable(),
      principalKind,
      principalId: z.uuid(),
      at: isoTime,
      durationMs: count,
    }),
  ),
  truncated,
});

// Operations (README: Operations).
export const liveness = z.object({ ok: z.literal(true) });

const checkState = z.enum(['ok', 'unavailable']);
export const readiness = z.object({ ok: z.boolean(), checks: z.object({ postgres: checkState, redis: checkState }) });
