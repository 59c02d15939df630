import { z } from 'zod';
import * as api from '../../shared/api.schemas.js';
import { validationStreamEnd } from '../../shared/draft-validation.js';
import { traceEvent } from '../../shared/trace.js';

/** One kind of server-sent event of a streamed call: its `event:` name, what its `data:` JSON is, and when it comes. */
export interface StreamEvent {
  name: string;
  data: z.ZodType;
  description: string;
}

/**
 * The events of a streamed call (DESIGN §4 Streaming), in the order they come. Each has an `id:`
 * (1, 2, …, for Last-Event-ID). Clients ignore event names they do not know, so events can be added.
 */
export const streamEvents: readonly StreamEvent[] = [
  { name: 'start', data: api.streamStart, description: 'First, with id 1, before the run starts.' },
  { name: 'part', data: api.outputPart, description: 'An output part, as the agent makes it.' },
  { name: 'delta', data: api.streamDelta, description: 'Text appended to the current text part (token streaming).' },
  { name: 'trace', data: traceEvent, description: 'What the run did, in order; only when tracing (draft validation).' },
  {
    name: 'end',
    data: z.union([api.streamEnd, validationStreamEnd]),
    description: 'Exactly once, last: how the run ended (for a draft validation, with the validation fields).',
  },
  {
    name: 'error',
    data: api.errorBody,
    description: 'Instead of end, last, when the call was refused after its stream started, before it ran (its conversation stayed busy past CONV_WAIT_MS, a draft gone, the database unavailable). An unknown agent is answered 404 before any event.',
  },
];
