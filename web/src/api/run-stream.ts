import { AgentexecClient, AgentexecError } from '../../../clients/typescript/src/index';
import type { OutputPart, RunEndData, RunStartData, TraceEvent } from './types';
import { reportSessionEnded, type ApiErrorBody } from './http';

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

const connectionLost: ApiErrorBody = { code: 'network', message: 'The connection to the server was lost before the run ended.' };

/**
 * Starts a streamed call (execAgent or validateDraftStream, with `stream: true`) and relays its events,
 * through the project's TypeScript client (clients/typescript/). Every call carries a request id of
 * our own (as X-Request-Id, and for execAgent as its Idempotency-Key), so it can be stopped before its
 * convid is known, and an execAgent stream that breaks is re-attached from the last event received.
 */
export function startStreamedRun(path: string, body: Record<string, unknown>, handlers: RunHandlers): RunningCall {
  const requestId = crypto.randomUUID();
  const client = new AgentexecClient({ baseUrl: '', headers: { 'X-Request-Id': requestId } });
  // A draft's validation cannot be joined by a retry: only execAgent re-attaches.
  const events = client.streamEndpoint(path, body, path === '/api/exec/execAgent' ? { idempotencyKey: requestId } : {});
  const finished = (async (): Promise<RunOutcome> => {
    try {
      for await (const event of events) {
        if (event.event === 'start') handlers.onStart(event.data);
        else if (event.event === 'part') handlers.onPart(event.data);
        else if (event.event === 'delta') handlers.onDelta(event.data.text);
        else if (event.event === 'trace') handlers.onTrace?.(event.data as unknown as TraceEvent);
        else if (event.event === 'end') return { kind: 'end', data: event.data as RunEndData };
      }
    } catch (err) {
      if (!(err instanceof AgentexecError) || err.code === 'network') return { kind: 'error', error: connectionLost };
      const error: ApiErrorBody = { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) };
      if (err.status === 401) reportSessionEnded(err.status, error);
      return { kind: 'error', error };
    }
    return { kind: 'error', error: connectionLost };
  })();
  return {
    finished,
    async stop() {
      await client.cancel({ requestId });
    },
  };
}
