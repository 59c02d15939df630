import { z } from 'zod';

const at = z.iso.datetime();

/**
 * What a run did, in order, as the console's Run page shows it (DESIGN §18): each sys.fetch (its method,
 * its URL without the query, its status or error, and how long it took until the response's headers,
 * waiting for a fetch slot included), each ask, each log line. Kept with the run's execution record
 * (executions.timeline); a replayed call is not counted again. Secret values and password answers are
 * masked; texts are cut to `maxTimelineTextLength`; past `maxTimelineEntries` one `truncated` entry ends it.
 */
export const timelineEntry = z
  .discriminatedUnion('kind', [
    z.object({
      kind: z.literal('fetch'),
      at,
      method: z.string(),
      url: z.string().describe('Without its query or fragment; secret values masked.'),
      status: z.number().int().nullable().describe('The HTTP status; null when the request failed.'),
      error: z.string().nullable().describe('Why the request failed (no response).'),
      durationMs: z.number().int().describe('From the call to the response headers (or the failure), waiting for a fetch slot included.'),
    }),
    z.object({ kind: z.literal('ask'), at, message: z.string() }),
    z.object({ kind: z.literal('log'), at, text: z.string().describe('sys.log or console.log; secret values and password answers masked.') }),
    z.object({ kind: z.literal('truncated'), at }).describe('The run did more than the 200 entries kept.'),
  ])
  .describe('What a run did, in order: each live sys.fetch, ask and log line (replayed calls are not repeated).');

export type TimelineEntry = z.infer<typeof timelineEntry>;

export const maxTimelineEntries = 200;
export const maxTimelineTextLength = 500;
