import type { ApiClient } from '../client.js';
import { withCpuCost } from '../cpu.js';
import { cpuPerCall, cpuRows } from './cpu-rows.js';
import { execAgent } from '../exec.js';
import type { Scenario } from '../scenario.js';
import { runConcurrent, runSequential } from '../stats.js';

/** (c) Calls that continue one conversation, passing the convid of its first answer. */

async function startConversation(client: ApiClient): Promise<string> {
  return (await execAgent(client, { agentName: 'hello', inputs: { query: 'first' } })).convid;
}

async function continueConversation(client: ApiClient, convid: string): Promise<void> {
  const response = await execAgent(client, { agentName: 'hello', convid, inputs: { query: 'again' } });
  if (response.convid !== convid) throw new Error(`a continued call answered convid ${response.convid}, not ${convid}`);
}

export const conversationSequential: Scenario = {
  id: 'conversation-sequential',
  title: '(c) continuing one conversation, sequential',
  rows: [
    { id: 'conversation.sequential.p50', label: '(c) same conversation sequential p50', unit: 'ms', floor: 'sequentialP50' },
    { id: 'conversation.sequential.p99', label: '(c) same conversation sequential p99', unit: 'ms', floor: 'sequentialP99' },
  ],
  async run({ client, profile }) {
    const convid = await startConversation(client);
    await runSequential(profile.warmupCalls, () => continueConversation(client, convid));
    const result = await runSequential(profile.sequentialCalls, () => continueConversation(client, convid));
    return {
      values: { 'conversation.sequential.p50': result.p50, 'conversation.sequential.p99': result.p99 },
      notes: [`${result.count} calls after ${profile.warmupCalls} warm-up calls on the same conversation (its prompt history grows by one entry a call, up to the product's cap of 500, and every call reads and rewrites it), max ${result.max.toFixed(1)} ms`],
    };
  },
};

export const conversationShared: Scenario = {
  id: 'conversation-shared',
  title: '(c) 64 callers on ONE conversation',
  rows: [
    { id: 'conversation.shared.rate', label: '(c) 64 callers on one conversation', unit: 'calls/s', floor: 'concurrentRate', target: { op: '>=', value: 0.5, ofFloor: true } },
    { id: 'conversation.shared.p50', label: '(c) 64 callers on one conversation p50', unit: 'ms', floor: 'concurrentP50' },
    { id: 'conversation.shared.p99', label: '(c) 64 callers on one conversation p99', unit: 'ms', floor: 'concurrentP99' },
    ...cpuRows('(c) 64 callers on one conversation', 'conversation.shared.cpu'),
  ],
  async run({ client, profile, stack }) {
    const convid = await startConversation(client);
    const cost = await withCpuCost([stack.web.pid, stack.worker.pid], () =>
      runConcurrent(profile.oneConversationCalls, profile.concurrency, () => continueConversation(client, convid)),
    );
    const { result } = cost;
    return {
      values: {
        'conversation.shared.rate': result.callsPerSecond,
        'conversation.shared.p50': result.p50,
        'conversation.shared.p99': result.p99,
        ...cpuPerCall(cost, result.count, 'conversation.shared.cpu'),
      },
      notes: [`${result.count} calls by ${profile.concurrency} callers, max ${result.max.toFixed(1)} ms`],
    };
  },
};
