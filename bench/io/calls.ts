import { setTimeout as sleep } from 'node:timers/promises';
import type { ExecutionResponse } from '../../shared/api.js';
import type { ApiClient } from '../client.js';
import { summarize } from '../stats.js';
import { stampedTokens } from './llm-server.js';

/** The calls of bench:io's clients, and the loop that times them. */

/** The agent every call runs (the bench's fixture holds it under this name). */
export const agentName = 'waiter';

export interface CallResult {
  convid?: string;
  error?: string;
  /** Streamed calls: for each token, ms from the server writing it to this client reading it. */
  relayMs: number[];
  /** Streamed calls: the same for the answer's first token. */
  firstTokenRelayMs?: number;
}

export async function wholeCall(client: ApiClient, url: string, convid?: string): Promise<CallResult> {
  try {
    const answer = await client.post('/api/exec/execAgent', { agentName, inputs: { url }, ...(convid ? { convid } : {}) });
    if (answer.status !== 200) return { error: `HTTP ${answer.status}: ${answer.text.slice(0, 200)}`, relayMs: [] };
    const response = JSON.parse(answer.text) as ExecutionResponse;
    if (response.resultCode !== 'success') return { error: `${response.resultCode}: ${response.error?.message ?? ''}`.slice(0, 200), relayMs: [] };
    return { convid: response.convid, relayMs: [] };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err), relayMs: [] };
  }
}

export async function streamedCall(client: ApiClient, url: string, convid?: string): Promise<CallResult> {
  try {
    const events = await client.stream('/api/exec/execAgent', { agentName, inputs: { url }, stream: true, ...(convid ? { convid } : {}) }).done;
    const end = events.find((e) => e.event === 'end');
    const ended = end ? (JSON.parse(end.data) as ExecutionResponse) : undefined;
    if (!ended) {
      const error = events.find((e) => e.event === 'error');
      return { error: `no end event: ${events.length} events, ${error ? `error ${error.data}` : 'no error event'}`.slice(0, 200), relayMs: [] };
    }
    if (ended.resultCode !== 'success') return { error: `${ended.resultCode}: ${ended.error?.message ?? ''}`.slice(0, 200), relayMs: [] };
    const relayMs: number[] = [];
    let firstTokenRelayMs: number | undefined;
    for (const event of events) {
      if (event.event !== 'part' && event.event !== 'delta') continue;
      const text = (JSON.parse(event.data) as { text?: string }).text ?? '';
      for (const { position, stamp } of stampedTokens(text)) {
        relayMs.push(event.receivedHr - stamp);
        if (position === 1) firstTokenRelayMs = event.receivedHr - stamp;
      }
    }
    return { convid: ended.convid, relayMs, ...(firstTokenRelayMs === undefined ? {} : { firstTokenRelayMs }) };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err), relayMs: [] };
  }
}

/** When the clients start and which of their calls are timed (`driveClients`). */
export interface ClientTiming {
  spreadMs: number;
  warmupMs: number;
  durationMs: number;
}

export interface ClientsRun {
  /** Calls that ended without error inside the timed window. */
  completed: number;
  /** Each one's time from its start to its end, ms. */
  latencies: number[];
  relayMs: number[];
  firstTokenRelayMs: number[];
  errors: string[];
}

/**
 * One client per conversation in `convids`, each calling again as soon as it is answered. Clients start
 * spread over `spreadMs`, as independent users arrive, run `warmupMs` untimed, then `durationMs` more;
 * only calls that end within that last window are timed. Started all at once they would move in one
 * wave forever (each calls again as soon as it is answered), which measures how fast a burst of C calls
 * drains rather than the steady state. `atStart` and `atEnd` are called as the timed window opens and closes.
 */
export async function driveClients(
  convids: string[],
  call: (convid: string) => Promise<CallResult>,
  timing: ClientTiming,
  hooks: { atStart?: () => void; atEnd?: () => void } = {},
): Promise<ClientsRun> {
  const loopStart = performance.now();
  const windowStart = loopStart + timing.spreadMs + timing.warmupMs;
  const windowEnd = windowStart + timing.durationMs;
  const startTimer = setTimeout(() => hooks.atStart?.(), windowStart - loopStart);
  const endTimer = setTimeout(() => hooks.atEnd?.(), windowEnd - loopStart);
  const run: ClientsRun = { completed: 0, latencies: [], relayMs: [], firstTokenRelayMs: [], errors: [] };
  await Promise.all(
    convids.map(async (convid, i) => {
      await sleep((i * timing.spreadMs) / convids.length);
      while (performance.now() < windowEnd) {
        const begun = performance.now();
        const result = await call(convid);
        const ended = performance.now();
        if (result.error) run.errors.push(result.error);
        else if (ended >= windowStart && ended <= windowEnd) {
          run.completed += 1;
          run.latencies.push(ended - begun);
          run.relayMs.push(...result.relayMs);
          if (result.firstTokenRelayMs !== undefined) run.firstTokenRelayMs.push(result.firstTokenRelayMs);
        }
      }
    }),
  );
  clearTimeout(startTimer);
  clearTimeout(endTimer);
  return run;
}

/** p50, p99 and max of relay times (ms), to two decimals. */
export function relayFigures(ms: number[]): { p50: number; p99: number; max: number } {
  const { p50, p99, max } = summarize(ms);
  const two = (n: number) => Math.round(n * 100) / 100;
  return { p50: two(p50), p99: two(p99), max: two(max) };
}
