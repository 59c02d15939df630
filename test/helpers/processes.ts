import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { testEnv } from './test-env.js';

/** The compiled tree (dist/), where the entry points live. */
const distRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface Spawned {
  child: ChildProcess;
  output(): string;
  /** Resolves when the process exits, with its code. */
  exited: Promise<number | null>;
}

/** Runs one of the compiled entry points (`cli/web.js`, `workers/main.js`, `cli/main.js`) as its own process. */
export function spawnEntry(entry: string, args: string[] = [], env: Record<string, string> = {}, stdin?: string): Spawned {
  const child = spawn(process.execPath, ['--no-node-snapshot', `${distRoot}${entry}`, ...args], {
    env: { PATH: process.env.PATH ?? '', ...testEnv, LOG_LEVEL: 'info', ...env },
    stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (stdin !== undefined) child.stdin!.end(stdin);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Waits until the process printed `pattern`, failing after `timeoutMs` or if it exits first. */
export async function waitForOutput(spawned: Spawned, pattern: RegExp, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(spawned.output())) {
    if (spawned.child.exitCode !== null) throw new Error(`process exited (${spawned.child.exitCode}):\n${spawned.output()}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}:\n${spawned.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Runs a CLI command to its end (fed `stdin` when given); returns exit code, stdout+stderr, and the parsed JSON line when there is one. */
export async function runCli(args: string[], env: Record<string, string> = {}, stdin?: string): Promise<{ code: number | null; output: string; json: any }> {
  const spawned = spawnEntry('cli/main.js', args, { LOG_LEVEL: 'warn', ...env }, stdin);
  const code = await spawned.exited;
  const output = spawned.output();
  const jsonLine = output.split('\n').find((line) => line.startsWith('{'));
  return { code, output, json: jsonLine ? JSON.parse(jsonLine) : undefined };
}

/** A port nothing listens on now (the system picks it), for a process the test starts. */
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
