import type { OutputPart, RunEndData, RunStartData, TraceEvent } from './types';
import { readEventStream, type StreamEvent } from './event-stream';
import { ApiError, postJson, postRaw, type ApiErrorBody } from './http';

export interface RunHandlers {
  onStart(data: RunStartData): void;
  onPart(part: OutputPart): void;
  onDelta(text: string): void;
  onTrace?(event: TraceEvent): void;
}

/** How a streamed run ended: its `end` event, or an error (refused, HTTP error, connection lost). */
export type RunOutcome = { kind: 'end'; data: RunEndData } | { kind: 'error'; error: ApiErrorBody };

export interface RunningCall {
  finished: Promise<RunOutcome>;
  /** Asks the server to stop the run (POST /api/exec/cancel); the stream then ends `stopped`. */
  stop(): Promise<void>;
}

/**
 * Starts a streamed call (execAgent or validateDraftStream, with `stream: true`) and relays its events.
 * Every call carries an X-Request-Id of our own, so it can be stopped before its convid is known. A
 * stream that breaks before its end is re-attached once from the last event received.
 */
export function startStreamedRun(path: string, body: Record<string, unknown>, handlers: RunHandlers): RunningCall {
  const requestId = crypto.randomUUID();
  let convid: string | undefined;
  let lastId: string | undefined;
  let outcome: RunOutcome | undefined;
  const onEvent = (event: StreamEvent) => {
    lastId = event.id ?? lastId;
    const data = event.data as never;
    if (event.event === 'start') {
      convid = (data as RunStartData).convid;
      handlers.onStart(data);
    } else if (event.event === 'part') handlers.onPart(data);
    else if (event.event === 'delta') handlers.onDelta((data as { text: string }).text);
    else if (event.event === 'trace') handlers.onTrace?.(data);
    else if (event.event === 'end') outcome = { kind: 'end', data };
    else if (event.event === 'error') outcome = { kind: 'error', error: (data as { error: ApiErrorBody }).error };
  };
  const follow = async (response: Response) => {
    if (response.body) await readEventStream(response.body, onEvent);
  };
  const finished = (async (): Promise<RunOutcome> => {
    try {
      await follow(await postRaw(path, { ...body, stream: true }, { headers: { 'X-Request-Id': requestId } }));
      if (!outcome && convid) await follow(await postRaw('/api/exec/attach', { convid }, { headers: { 'Last-Event-ID': lastId ?? '0' } }));
    } catch (err) {
      if (err instanceof ApiError) return { kind: 'error', error: err.body };
      if (!outcome) return { kind: 'error', error: { code: 'network', message: 'The connection to the server was lost before the run ended.' } };
    }
    return outcome ?? { kind: 'error', error: { code: 'network', message: 'The connection to the server was lost before the run ended.' } };
  })();
  return {
    finished,
    async stop() {
      await postJson('/api/exec/cancel', convid ? { convid } : { requestId });
    },
  };
}
