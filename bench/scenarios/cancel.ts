import type { ApiClient } from '../client.js';
import { cancelConversation, dataOf, describeEvents, streamAgent } from '../exec.js';
import type { Scenario } from '../scenario.js';
import { summarize, withTimeout } from '../stats.js';

/**
 * (e) Cancel latency: a streamed call of an agent that says 'go' and then spins; after its first part
 * the bench cancels the conversation and times from sending the cancel to the `end` event (`stopped`).
 */

const eventWaitMs = 10_000;

async function cancelCycle(client: ApiClient, maxAgentRuntimeMs: number): Promise<number> {
  const call = streamAgent(client, { agentName: 'busy' });
  try {
    const { convid } = dataOf<{ convid: string }>(await call.next('start', eventWaitMs));
    await call.next('part', eventWaitMs);
    const sentAt = performance.now();
    if (!(await cancelConversation(client, convid))) throw new Error('cancel of a running call answered {cancelled: false}');
    const end = await call.next('end', eventWaitMs);
    const { resultCode } = dataOf<{ resultCode?: string }>(end);
    if (resultCode !== 'stopped') throw new Error(`the cancelled run ended ${resultCode}, not stopped`);
    return end.receivedHr - sentAt;
  } catch (err) {
    // The spinning run holds a core until it times out; let it end before anything else is measured.
    await withTimeout(call.done, maxAgentRuntimeMs + 5_000, 'the uncancelled run').catch(() => call.abort());
    throw new Error(`${err instanceof Error ? err.message : String(err)} (${describeEvents(call.events)})`);
  }
}

export const cancelLatency: Scenario = {
  id: 'cancel',
  title: '(e) cancel latency, cancel sent → end(stopped) received',
  rows: [
    { id: 'cancel.p50', label: '(e) cancel → end(stopped) p50', unit: 'ms', floor: 'sequentialP50' },
    // DESIGN §4: the run ends within 100 ms of the cancel reaching the worker.
    { id: 'cancel.p99', label: '(e) cancel → end(stopped) p99', unit: 'ms', floor: 'sequentialP99', target: { op: '<=', value: 100 } },
  ],
  async run({ client, profile, stack }) {
    const latencies: number[] = [];
    for (let i = 0; i < profile.cancelCycles; i++) latencies.push(await cancelCycle(client, stack.settings.maxAgentRuntimeMs));
    const summary = summarize(latencies);
    return {
      values: { 'cancel.p50': summary.p50, 'cancel.p99': summary.p99 },
      notes: [`${summary.count} cycles, max ${summary.max.toFixed(1)} ms`],
    };
  },
};
