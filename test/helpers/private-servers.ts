import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, chownSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { freePort } from './processes.js';
import { waitFor } from './wait.js';

/**
 * A Redis server and a PostgreSQL cluster of this test's own, on their own ports, so a test can stop
 * and restart them without disturbing anything else on the machine.
 */

export interface PrivateServer {
  port: number;
  url: string;
  /** Stops the server the way its operator would (Redis: SHUTDOWN NOSAVE; PostgreSQL: fast shutdown). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and removes its files. */
  destroy(): Promise<void>;
}


function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** redis-server without persistence, as the machine's Redis runs. */
export async function startPrivateRedis(): Promise<PrivateServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const server: PrivateServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      await waitFor(() => accepts(port), 10_000, `redis-server on ${port}`);
    },
    async stop() {
      const stopping = child;
      if (!stopping || stopping.exitCode !== null) return;
      const exited = new Promise((resolve) => stopping.once('exit', resolve));
      stopping.kill('SIGTERM');
      await exited;
    },
    destroy: () => server.stop(),
  };
  await server.start();
  return server;
}

/** The PostgreSQL binaries of the machine's newest installed major version. */
function postgresBin(name: string): string {
  const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
  return `/usr/lib/postgresql/${versions[0]}/bin/${name}`;
}

/** PostgreSQL refuses to run as root: as root, its commands run as the postgres user. */
function runAsOwner(command: string, args: string[]) {
  const asRoot = process.getuid?.() === 0;
  const result = spawnSync(asRoot ? 'runuser' : command, asRoot ? ['-u', 'postgres', '--', command, ...args] : args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr || result.stdout}`);
}

/** A fresh cluster with trust authentication for the user postgres. */
export async function startPrivatePostgres(): Promise<PrivateServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'agentexec-pg-'));
  if (process.getuid?.() === 0) {
    const owner = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const group = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    chownSync(dir, Number(owner.stdout), Number(group.stdout));
  }
  runAsOwner(postgresBin('initdb'), ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  const server: PrivateServer = {
    port,
    url: `postgres://postgres@127.0.0.1:${port}`,
    async start() {
      runAsOwner(postgresBin('pg_ctl'), ['-D', join(dir, 'data'), '-o', options, '-l', join(dir, 'log'), '-w', 'start']);
    },
    async stop() {
      runAsOwner(postgresBin('pg_ctl'), ['-D', join(dir, 'data'), '-m', 'fast', '-w', 'stop']);
    },
    async destroy() {
      try {
        await server.stop();
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}
