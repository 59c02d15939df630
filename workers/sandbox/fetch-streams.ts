import type { EventStreamParser } from '../../shared/server-sent-events.js';
import type { FetchBodyStream } from '../outbound-http/fetch-body-stream.js';
import type { FetchRequest } from '../outbound-http/http-fetch.js';
import type { EntryOf } from './journal.js';

/**
 * The streamed sys.fetch responses of one run (streamed-fetch.ts reads them), by the number the
 * agent's response holds. Kept apart from the calls that read them so the session can hold them
 * without importing those calls (which import the session).
 */

type FetchEntry = EntryOf<'fetch'>;

export interface OpenFetchStream {
  entry: FetchEntry & { stream: NonNullable<FetchEntry['stream']> };
  request: FetchRequest;
  /** Chunks of the entry handed to the agent so far. */
  read: number;
  /** The connection while it is open; null when replaying or once it has ended. */
  live: { body: FetchBodyStream; release: () => void } | null;
  /** The parser of the agent's current `events()`; each `events()` starts one of its own (`restart`). */
  events: EventStreamParser | null;
}

/** The run's open streams, by the number the agent's response holds. */
export interface FetchStreams {
  next: number;
  open: Map<number, OpenFetchStream>;
}

export function createFetchStreams(): FetchStreams {
  return { next: 1, open: new Map() };
}
