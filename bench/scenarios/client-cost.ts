import http from 'node:http';
import type { Scenario } from '../scenario.js';
import { runConcurrent } from '../stats.js';

/**
 * Which HTTP client costs this process less CPU per call: a raw `http.request` over a keep-alive
 * Agent, or the global fetch (undici). Both GET /healthz with 64 in flight; the client shares the
 * 2 cores with the server, so its own cost shows in every throughput figure.
 */

async function cpuMicrosPerCall(count: number, inFlight: number, call: () => Promise<void>): Promise<number> {
  await runConcurrent(Math.min(200, count), inFlight, call);
  const before = process.cpuUsage();
  await runConcurrent(count, inFlight, call);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / count;
}

function getWithAgent(agent: http.Agent, url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`/healthz answered ${res.statusCode}`))));
      })
      .on('error', reject);
  });
}

async function getWithFetch(url: string): Promise<void> {
  const res = await fetch(url);
  await res.text();
  if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
}

export const clientCost: Scenario = {
  id: 'client-cost',
  title: 'client CPU per call: http.request (keep-alive Agent) vs fetch',
  rows: [
    { id: 'client.http.cpu', label: 'client CPU per call, http.request + keep-alive Agent', unit: 'µs/call' },
    { id: 'client.fetch.cpu', label: 'client CPU per call, global fetch', unit: 'µs/call' },
  ],
  async run({ stack, profile }) {
    const url = `${stack.baseUrl}/healthz`;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
    try {
      const httpCost = await cpuMicrosPerCall(profile.clientCostCalls, profile.concurrency, () => getWithAgent(agent, url));
      const fetchCost = await cpuMicrosPerCall(profile.clientCostCalls, profile.concurrency, () => getWithFetch(url));
      return {
        values: { 'client.http.cpu': httpCost, 'client.fetch.cpu': fetchCost },
        notes: [`GET /healthz, ${profile.clientCostCalls} calls each, ${profile.concurrency} in flight; the bench uses http.request`],
      };
    } finally {
      agent.destroy();
    }
  },
};
