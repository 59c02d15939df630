import { createClient, type ApiClient, type SseCall } from '../client.js';
import { cancelConversation, dataOf, streamAgent } from '../exec.js';
import type { Profile } from '../options.js';
import { readRssMb, withRssPeaks } from '../rss.js';
import type { Scenario } from '../scenario.js';
import { delay, runConcurrent, withTimeout } from '../stats.js';

/**
 * (f) Web process memory with many open streams: N streamed calls of an agent that sleeps 8 s. With
 * worker concurrency 16 most wait in the queue; they are open streams all the same. Measured once
 * every stream got its `start` event; then the calls are cancelled (or, failing that, cut).
 */

const startWaitMs = 60_000;

export function openStreams(profile: Profile): Scenario {
  const count = profile.openStreams;
  return {
    id: 'open-streams',
    title: `(f) web RSS with ${count} open streams`,
    rows: [
      { id: 'memory.web.openStreams', label: `(f) web RSS with ${count} open streams`, unit: 'MB', target: { op: '<=', value: 200 } },
      { id: 'memory.web.beforeStreams', label: '(f) web RSS before opening them', unit: 'MB' },
    ],
    async run({ client, stack, bearerKey }) {
      const before = readRssMb(stack.web.pid);
      const streamClient = createClient(stack.baseUrl, { bearerKey, maxSockets: count + 16 });
      const calls = Array.from({ length: count }, () => streamAgent(streamClient, { agentName: 'sleeper' }));
      try {
        const starts = await withTimeout(Promise.all(calls.map((c) => c.next('start', startWaitMs))), startWaitMs, `${count} start events`);
        const { peaksMb } = await withRssPeaks([stack.web.pid], () => delay(1_000));
        const ending = await endStreams(client, calls, starts.map((s) => dataOf<{ convid: string }>(s).convid));
        return {
          values: { 'memory.web.openStreams': peaksMb[0] ?? Number.NaN, 'memory.web.beforeStreams': before },
          notes: [`peak over the 1 s after all ${count} streams started`, ending],
        };
      } finally {
        for (const call of calls) call.abort();
        streamClient.close();
      }
    },
  };
}

/** Cancels every call and waits for the streams to end; says how that went. */
async function endStreams(client: ApiClient, calls: SseCall[], convids: string[]): Promise<string> {
  try {
    await runConcurrent(convids.length, 16, (i) => cancelConversation(client, convids[i]!).then(() => undefined));
  } catch (err) {
    return `cancel failed (${err instanceof Error ? err.message : String(err)}); the streams were cut instead`;
  }
  const settled = await withTimeout(Promise.allSettled(calls.map((c) => c.done)), 30_000, 'the cancelled streams').catch(() => undefined);
  if (!settled) return 'cancelled, but not every stream ended within 30 s; the rest were cut';
  const stopped = calls.filter((c) => c.events.at(-1)?.event === 'end' && dataOf<{ resultCode?: string }>(c.events.at(-1)!).resultCode === 'stopped');
  return `cancelled: ${stopped.length} of ${calls.length} streams ended stopped`;
}
