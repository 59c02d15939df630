import type { ApiClient } from '../client.js';
import { execAgent } from '../exec.js';
import type { Scenario } from '../scenario.js';
import { runSequential } from '../stats.js';

/** (c) An ask → answer cycle: the call that pauses at the ask, then the call that answers it. */

async function askCycle(client: ApiClient, name: string): Promise<void> {
  const asked = await execAgent(client, { agentName: 'askName' }, 'ask');
  if (asked.askInput?.inputs[0]?.name !== 'name') throw new Error(`the ask carried ${JSON.stringify(asked.askInput)}`);
  const answered = await execAgent(client, { agentName: 'askName', convid: asked.convid, inputs: { name } });
  const part = answered.output?.[0];
  if (part?.type !== 'text' || part.text !== `Hi ${name}`) throw new Error(`the answered ask said ${JSON.stringify(answered.output)}`);
}

export const askAnswer: Scenario = {
  id: 'ask-cycle',
  title: '(c) ask → answer cycle (2 calls), sequential',
  rows: [
    { id: 'ask.cycle.p50', label: '(c) ask → answer cycle p50 (2 calls)', unit: 'ms', floor: 'sequentialP50' },
    { id: 'ask.cycle.p99', label: '(c) ask → answer cycle p99 (2 calls)', unit: 'ms', floor: 'sequentialP99' },
  ],
  async run({ client, profile }) {
    await runSequential(Math.ceil(profile.warmupCalls / 10), (i) => askCycle(client, `w${i}`));
    const result = await runSequential(profile.askCycles, (i) => askCycle(client, `x${i}`));
    return {
      values: { 'ask.cycle.p50': result.p50, 'ask.cycle.p99': result.p99 },
      notes: [`${result.count} cycles, max ${result.max.toFixed(1)} ms`],
    };
  },
};
