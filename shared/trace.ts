import { z } from 'zod';

/**
 * Trace events of a draft validation run (DESIGN §5, stream event `trace`). Each says what happened,
 * in order (`seq` from 1), when (`at`, ISO time), and where in the draft's own source (`line` and
 * `column`, 1-based; null when the sandbox could not place it). Values are JSON, shortened to a preview
 * string when large; password answers never appear.
 */
const where = {
  seq: z.number().int().min(1),
  at: z.iso.datetime(),
  line: z.number().int().min(1).nullable(),
  column: z.number().int().min(1).nullable(),
};

/** The sys functions a trace names. */
export const tracedCalls = ['say', 'html', 'image', 'write', 'fail', 'now', 'sleep', 'fetch', 'ask', 'call'] as const;
export type TracedCall = (typeof tracedCalls)[number];

export const traceEvent = z.discriminatedUnion('kind', [
  /** A sys function was called; `args` as the agent passed them. */
  z.object({ ...where, kind: z.literal('call'), name: z.enum(tracedCalls), args: z.json() }),
  /** A sys call returned (`value`) or threw (`error`); `call` is the seq of its `call` event. */
  z.object({ ...where, kind: z.literal('result'), name: z.enum(tracedCalls), call: z.number().int().min(1), value: z.json().optional(), error: z.string().optional() }),
  /** A property of sys.vars or sys.conv was set or deleted; `path` from the top of that object. */
  z.object({ ...where, kind: z.literal('var'), scope: z.enum(['vars', 'conv']), path: z.array(z.string()), op: z.enum(['set', 'delete']), value: z.json().optional() }),
  /** sys.log or console.log. */
  z.object({ ...where, kind: z.literal('log'), text: z.string() }),
  /** The run made more trace events than are kept; later ones were dropped. */
  z.object({ ...where, kind: z.literal('truncated') }),
]);

export type TraceEvent = z.infer<typeof traceEvent>;

/** At most this many events per run; then one `truncated` event. */
export const maxTraceEvents = 5000;
