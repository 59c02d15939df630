import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './processes.js';
import { testEnv } from './test-env.js';

/** A PgBouncer of the test's own, in transaction mode, in front of the test run's PostgreSQL (DESIGN §17). */
export interface PgBouncer {
  port: number;
  /** `databaseUrl` (same user and database) through this PgBouncer. */
  urlFor(databaseUrl: string): string;
  /** Runs a command (`SHOW CLIENTS`, `SHOW STATS`…) on PgBouncer's admin console. */
  admin(command: string): Promise<Array<Record<string, unknown>>>;
  /** Everything PgBouncer logged (stderr). */
  output(): string;
  stop(): Promise<void>;
}

/** Where Debian's package puts it (`apt-get install pgbouncer`; .ci/run installs it). */
const binary = '/usr/sbin/pgbouncer';

/**
 * Starts PgBouncer as Debian ships it (1.18), not as a daemon, on a free loopback port: transaction
 * pooling, no prepared statement support, every database of the server behind it (`*`), the user of
 * `serverUrl` let in without a password (the test PostgreSQL trusts loopback). `stop` ends it; so does
 * this process's exit.
 */
export async function startPgBouncer(serverUrl = testEnv.DATABASE_URL!, { poolSize = 10 } = {}): Promise<PgBouncer> {
  if (!existsSync(binary)) throw new Error(`${binary} not found: install PgBouncer (apt-get install pgbouncer)`);
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'agentexec-pgbouncer-'));
  const authFile = join(dir, 'users.txt');
  const configFile = join(dir, 'pgbouncer.ini');
  await writeFile(authFile, `"${user}" ""\n`);
  await writeFile(
    configFile,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${authFile}`,
      `admin_users = ${user}`,
      'pool_mode = transaction',
      'max_client_conn = 1000',
      `default_pool_size = ${poolSize}`,
      'logfile =',
      'pidfile =',
      '',
    ].join('\n'),
  );
  // PgBouncer refuses to run as root: there it drops to `nobody`, who must be able to read the files.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) await Promise.all([chmod(dir, 0o755), chmod(authFile, 0o644), chmod(configFile, 0o644)]);
  const child = spawn(binary, [...(asRoot ? ['-u', 'nobody'] : []), configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const deadline = Date.now() + 10_000;
  while (!output.includes(`listening on 127.0.0.1:${port}`)) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`pgbouncer exited (${child.exitCode}):\n${output}`);
    if (Date.now() > deadline) throw new Error(`pgbouncer did not start listening:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }

  const urlFor = (databaseUrl: string) => {
    const url = new URL(databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String(port);
    return url.toString();
  };
  return {
    port,
    urlFor,
    async admin(command) {
      const url = new URL(urlFor(serverUrl));
      url.pathname = '/pgbouncer';
      url.username = user;
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      try {
        return (await client.query(command)).rows;
      } finally {
        await client.end();
      }
    },
    output: () => output,
    async stop() {
      process.removeListener('exit', killOnExit);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
