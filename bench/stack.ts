import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { delay } from './stats.js';

/** The product as the Procfile runs it: one web and one worker process, each its own `node`. */

export interface StackSettings {
  databaseUrl: string;
  redisUrl: string;
  queuePrefix: string;
  port: number;
  /** Unset: the product's default. */
  workerConcurrency?: number;
  maxAgentRuntimeMs: number;
  /** More environment for the product's processes. */
  env?: Record<string, string>;
}

export interface ProductProcess {
  name: string;
  pid: number;
  /** Log lines at warn level or above (the processes run with LOG_LEVEL=warn), the first 50. */
  problems(): string[];
  /** The last part of what it printed. */
  tail(): string;
  running(): boolean;
  /** SIGTERM, then SIGKILL when it has not exited after `graceMs`; tells which it took. */
  stop(graceMs: number): Promise<string>;
}

export interface Stack {
  settings: StackSettings;
  baseUrl: string;
  web: ProductProcess;
  worker: ProductProcess;
}

const distRoot = fileURLToPath(new URL('../', import.meta.url));

/**
 * The flags the Procfile gives `node` for the process that runs `entry` (e.g. `workers/main.js`), so
 * the bench measures the product as it is deployed.
 */
function procfileNodeFlags(entry: string): string[] {
  const procfile = readFileSync(new URL('../../Procfile', import.meta.url), 'utf8');
  const line = procfile.split('\n').find((l) => l.trim().endsWith(`dist/${entry}`));
  if (!line) throw new Error(`the Procfile runs no dist/${entry}`);
  const words = line.slice(line.indexOf(':') + 1).trim().split(/\s+/);
  return words.slice(1, -1);
}

const tailChars = 16_000;

export function stackEnv(settings: StackSettings): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    DATABASE_URL: settings.databaseUrl,
    REDIS_URL: settings.redisUrl,
    QUEUE_PREFIX: settings.queuePrefix,
    PORT: String(settings.port),
    LOG_LEVEL: 'warn',
    ...(settings.workerConcurrency === undefined ? {} : { WORKER_CONCURRENCY: String(settings.workerConcurrency) }),
    MAX_AGENT_RUNTIME_MS: String(settings.maxAgentRuntimeMs),
    SECRETS_KEY: randomBytes(32).toString('base64url'),
    SESSION_SECRET: randomBytes(32).toString('base64url'),
    ...(process.env.WEB_INLINE_RUNS ? { WEB_INLINE_RUNS: process.env.WEB_INLINE_RUNS } : {}),
    ...(process.env.DATABASE_PREPARED_STATEMENTS ? { DATABASE_PREPARED_STATEMENTS: process.env.DATABASE_PREPARED_STATEMENTS } : {}),
    // OTEL_EXPORTER_OTLP_ENDPOINT and the other OpenTelemetry settings: the stack measured with tracing on (DESIGN §18).
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('OTEL_')) as [string, string][]),
    ...settings.env,
  };
}

/**
 * Spawns `workers` worker processes and one web process per port, all sharing one environment (the
 * same SECRETS_KEY), and waits until every web process answers /healthz.
 */
export async function startCluster(
  settings: StackSettings,
  shape: { webPorts: number[]; workers: number },
  onSpawn: (process: ProductProcess) => void,
): Promise<{ baseUrls: string[]; processes: ProductProcess[] }> {
  const env = stackEnv(settings);
  const processes: ProductProcess[] = [];
  const spawnOne = (name: string, entry: string, extra: Record<string, string> = {}) => {
    const spawned = spawnProcess(name, entry, { ...env, ...extra });
    processes.push(spawned);
    onSpawn(spawned);
  };
  for (let i = 0; i < shape.workers; i++) spawnOne(`worker${i + 1}`, 'workers/main.js');
  shape.webPorts.forEach((port, i) => spawnOne(`web${i + 1}`, 'cli/web.js', { PORT: String(port) }));
  const baseUrls = shape.webPorts.map((port) => `http://127.0.0.1:${port}`);
  for (const baseUrl of baseUrls) await waitUntilHealthy(baseUrl, processes, 30_000);
  return { baseUrls, processes };
}

/** Spawns web and worker and waits until the web process answers /healthz. */
export async function startStack(settings: StackSettings, onSpawn: (process: ProductProcess) => void): Promise<Stack> {
  const env = stackEnv(settings);
  const worker = spawnProcess('worker', 'workers/main.js', env);
  onSpawn(worker);
  const web = spawnProcess('web', 'cli/web.js', env);
  onSpawn(web);
  const baseUrl = `http://127.0.0.1:${settings.port}`;
  await waitUntilHealthy(baseUrl, [web, worker], 30_000);
  return { settings, baseUrl, web, worker };
}

function spawnProcess(name: string, entry: string, env: Record<string, string>): ProductProcess {
  // e.g. BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles web and worker.
  const nodeArgs = [...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean), ...(env.BENCH_NODE_IMPORT ? ['--import', env.BENCH_NODE_IMPORT] : [])];
  return spawnNode(name, [...procfileNodeFlags(entry), ...nodeArgs, `${distRoot}${entry}`], env);
}

/** Runs `node` with these arguments as a process the bench watches (its output kept) and stops. */
export function spawnNode(name: string, args: string[], env: Record<string, string>): ProductProcess {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error(`could not start the ${name} process`);
  let tail = '';
  let partial = '';
  const problems: string[] = [];
  const take = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    tail = (tail + text).slice(-tailChars);
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (line.trim() && problems.length < 50) problems.push(line);
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  // e.g. BENCH_LOG_DIR=/tmp/logs keeps each process's whole output in <dir>/<name>.log.
  if (process.env.BENCH_LOG_DIR) {
    const file = createWriteStream(join(process.env.BENCH_LOG_DIR, `${name}.log`));
    child.stdout.pipe(file);
    child.stderr.pipe(file);
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    name,
    pid: child.pid,
    problems: () => [...problems],
    tail: () => tail,
    running,
    async stop(graceMs) {
      if (!running()) return `had exited already (${child.exitCode ?? child.signalCode})`;
      child.kill('SIGTERM');
      const timer = delay(graceMs).then(() => 'timeout' as const);
      if ((await Promise.race([exited.then(() => 'exited' as const), timer])) === 'exited') return `exited on SIGTERM (${child.exitCode})`;
      child.kill('SIGKILL');
      await exited;
      return `did not exit within ${graceMs} ms of SIGTERM; killed`;
    },
  };
}

/** Waits until `baseUrl`'s /healthz answers 200; throws once one of `processes` exits or after `timeoutMs`. */
export async function waitUntilHealthy(baseUrl: string, processes: ProductProcess[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const dead = processes.find((p) => !p.running());
    if (dead) throw new Error(`the ${dead.name} process exited during start-up:\n${dead.tail()}`);
    if ((await healthStatus(`${baseUrl}/healthz`)) === 200) return;
    if (Date.now() > deadline) throw new Error(`${baseUrl} did not answer /healthz within ${timeoutMs} ms`);
    await delay(100);
  }
}

function healthStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    http
      .get(url, { agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .on('error', () => resolve(0));
  });
}

/** A port nothing listens on right now, for a process to take. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no free port'))));
    });
  });
}
