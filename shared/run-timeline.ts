/**
 * What a run did, in order, as the console's Run page shows it (DESIGN §18): each sys.fetch (its method,
 * its URL without the query, its status or error, and how long it took until the response's headers,
 * waiting for a fetch slot included), each ask, each log line. Kept with the run's execution record
 * (executions.timeline); a replayed call is not counted again. Secret values and password answers are
 * masked; texts are cut to `maxTimelineTextLength`; past `maxTimelineEntries` one `truncated` entry ends it.
 */
export type TimelineEntry =
  | { kind: 'fetch'; at: string; method: string; url: string; status: number | null; error: string | null; durationMs: number }
  | { kind: 'ask'; at: string; message: string }
  | { kind: 'log'; at: string; text: string }
  | { kind: 'truncated'; at: string };

export const maxTimelineEntries = 200;
export const maxTimelineTextLength = 500;
