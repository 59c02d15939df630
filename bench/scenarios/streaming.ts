import type { SseEvent } from '../sse.js';
import type { ApiClient } from '../client.js';
import { dataOf, describeEvents, streamAgent } from '../exec.js';
import type { Scenario } from '../scenario.js';
import { summarize, withTimeout } from '../stats.js';

/**
 * (d) Streaming latency: the ticker agent says Date.now() twenty times, 20 ms apart; each part's
 * latency is when this process received it minus the time the agent wrote into it.
 */

const partsPerCall = 20;

/** One streamed ticker call; the latency of each of its parts, in ms. */
async function streamTicker(client: ApiClient): Promise<number[]> {
  const call = streamAgent(client, { agentName: 'ticker' });
  const { status, headers } = await call.response;
  if (status !== 200) throw new Error(`a streamed call answered HTTP ${status}`);
  if (!headers['x-run-id']) throw new Error('a streamed call answered without X-Run-Id');
  const events = await withTimeout(call.done, 15_000, 'the ticker stream');
  checkStreamShape(events);
  const parts = events.filter((e) => e.event === 'part');
  if (parts.length !== partsPerCall) throw new Error(`the ticker streamed ${parts.length} parts, not ${partsPerCall}`);
  return parts.map((e) => e.receivedAt - Number(dataOf<{ text: string }>(e).text));
}

/** start first, exactly one end and last, ending success. */
function checkStreamShape(events: SseEvent[]): void {
  const names = events.map((e) => e.event);
  const ends = names.filter((n) => n === 'end').length;
  if (names[0] !== 'start' || names.at(-1) !== 'end' || ends !== 1) throw new Error(`a malformed stream: ${describeEvents(events)}`);
  const { resultCode } = dataOf<{ resultCode?: string }>(events.at(-1)!);
  if (resultCode !== 'success') throw new Error(`the ticker ended ${resultCode}: ${describeEvents(events)}`);
}

export const streaming: Scenario = {
  id: 'streaming',
  title: '(d) streaming latency, agent say() → client receives the part',
  rows: [
    { id: 'stream.part.p50', label: '(d) say() → part received p50', unit: 'ms', floor: 'sequentialP50' },
    { id: 'stream.part.p99', label: '(d) say() → part received p99', unit: 'ms', floor: 'sequentialP99' },
  ],
  async run({ client, profile }) {
    await streamTicker(client);
    const latencies: number[] = [];
    for (let i = 0; i < profile.streamCalls; i++) latencies.push(...(await streamTicker(client)));
    const summary = summarize(latencies);
    return {
      values: { 'stream.part.p50': summary.p50, 'stream.part.p99': summary.p99 },
      notes: [`${summary.count} parts from ${profile.streamCalls} streamed calls, max ${summary.max} ms (ms resolution: both clocks are Date.now())`],
    };
  },
};
