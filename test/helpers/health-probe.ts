import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Times `GET <url>/healthz` every 20 ms from a process of its own until stopped: the latencies are the
 * server's, not those of a test process that meanwhile reads large answers or collects a big heap.
 */
export interface HealthProbe {
  /** Stops probing and gives every latency measured (ms). */
  stop(): Promise<number[]>;
}

/** Starts the probe; resolves once its first /healthz has been answered. */
export async function startHealthProbe(url: string): Promise<HealthProbe> {
  const child = fork(fileURLToPath(import.meta.url), [url], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`the /healthz probe exited (${code})`))));
  exited.catch(() => undefined);
  const next = () => Promise.race([new Promise<unknown>((resolve) => child.once('message', resolve)), exited]);
  await next();
  return {
    async stop() {
      const latencies = next();
      child.send('stop');
      return (await latencies) as number[];
    },
  };
}

async function probe(url: string): Promise<void> {
  let stopped = false;
  let ready = false;
  process.once('message', () => (stopped = true));
  const latencies: number[] = [];
  while (!stopped) {
    const started = performance.now();
    const res = await fetch(`${url}/healthz`);
    await res.arrayBuffer();
    // A process that stops answering ends the probe, and stop() then rejects.
    if (!res.ok) throw new Error(`/healthz answered ${res.status}`);
    // The first fetch of a process loads and compiles its HTTP client: it is the probe's own warm-up.
    if (ready) latencies.push(performance.now() - started);
    else process.send!('ready');
    ready = true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  process.send!(latencies, () => process.disconnect());
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.send) await probe(process.argv[2]!);
