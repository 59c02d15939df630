import type { ApiClient } from '../client.js';
import type { Scenario } from '../scenario.js';
import { runConcurrent, runSequential } from '../stats.js';

/** (k) /api/exec/submit of the hello agent (DESIGN §14): answered as soon as the run is queued. */

async function submitHello(client: ApiClient, query: string): Promise<void> {
  const answer = await client.post('/api/exec/submit', { agentName: 'hello', inputs: { query } });
  if (answer.status !== 202) throw new Error(`submit answered ${answer.status}: ${answer.text.slice(0, 200)}`);
}

export const submitSequential: Scenario = {
  id: 'submit-sequential',
  title: '(k) submit hello, sequential',
  rows: [
    { id: 'submit.sequential.p50', label: '(k) submit sequential p50', unit: 'ms', floor: 'sequentialP50', target: { op: '<=', value: 3 } },
    { id: 'submit.sequential.p99', label: '(k) submit sequential p99', unit: 'ms', floor: 'sequentialP99' },
  ],
  async run({ client, profile }) {
    await runSequential(profile.warmupCalls, (i) => submitHello(client, `warm${i}`));
    const result = await runSequential(profile.sequentialCalls, (i) => submitHello(client, `s${i}`));
    return {
      values: { 'submit.sequential.p50': result.p50, 'submit.sequential.p99': result.p99 },
      notes: [`${result.count} submits, ${Math.round(result.callsPerSecond)}/s; the runs go on in the background`],
    };
  },
};

export const submitConcurrent: Scenario = {
  id: 'submit-concurrent',
  title: '(k) submit hello, 64 clients',
  rows: [{ id: 'submit.concurrent.rate', label: '(k) submit 64 clients', unit: 'calls/s', floor: 'concurrentRate' }],
  async run({ client, profile }) {
    const result = await runConcurrent(profile.concurrentCalls, profile.concurrency, (i) => submitHello(client, `c${i}`));
    return { values: { 'submit.concurrent.rate': result.callsPerSecond }, notes: [`p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms`] };
  },
};
