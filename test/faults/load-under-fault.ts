import { execAgent } from '../helpers/api.js';

/** One call made by the fault tests' background load. */
export interface LoadCall {
  client: number;
  status: number;
  resultCode?: string;
  errorCode?: string;
  ms: number;
  /** When it was sent (performance.now()). */
  sentAt: number;
}

export interface BackgroundLoad {
  calls: LoadCall[];
  /** Each client's conversation. */
  convids: string[];
  /** Resolves once every client has made `successes` successful calls in a row after `since`. */
  recovered(since: number, successes: number, timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * `clients` callers, each calling `agentName` again and again on a conversation of its own (started
 * before the load), one call at a time; every answer is kept for the test to judge.
 */
export async function startBackgroundLoad(url: string, key: string, agentName: string, clients: number): Promise<BackgroundLoad> {
  const calls: LoadCall[] = [];
  const convids: string[] = [];
  for (let i = 0; i < clients; i++) {
    const first = await execAgent(url, key, { agentName });
    if (first.body.resultCode !== 'success') throw new Error(`the first call ended ${JSON.stringify(first.body)}`);
    convids.push(first.body.convid);
  }
  let stopped = false;
  const loops = convids.map(async (convid, client) => {
    while (!stopped) {
      const sentAt = performance.now();
      const answer = await execAgent(url, key, { agentName, convid }).catch(() => ({ status: 0, body: undefined as any }));
      calls.push({ client, status: answer.status, resultCode: answer.body?.resultCode, errorCode: answer.body?.error?.code, ms: performance.now() - sentAt, sentAt });
      if (answer.status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
  return {
    calls,
    convids,
    async recovered(since, successes, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      const streak = (client: number) => {
        const mine = calls.filter((c) => c.client === client && c.sentAt >= since);
        const last = mine.slice(-successes);
        return last.length === successes && last.every((c) => c.status === 200 && c.resultCode === 'success');
      };
      while (!convids.every((_, client) => streak(client))) {
        if (Date.now() > deadline) throw new Error(`the service did not recover within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}
