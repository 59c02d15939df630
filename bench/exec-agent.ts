import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { compileAgent } from '../shared/compile-agent.js';
import { generateServiceAccountKey } from '../shared/service-account-key.js';
import { createDb, ensureDatabase, migrateToLatest } from '../db/database.js';
import { insertAgentVersion } from '../db/agents.repository.js';
import { insertServiceAccount } from '../db/service-accounts.repository.js';

/**
 * Latency and throughput of execAgent on the hello agent, through the whole stack: the server runs as
 * its own process (web + worker, as `npm start` runs it) on a database and queue prefix of its own.
 * Usage: npm run bench:exec [-- --sequential 1000 --concurrent 32 --calls 4000]
 */
const args = new Map<string, number>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), Number(process.argv[i + 1]));
const sequential = args.get('sequential') ?? 1000;
const concurrency = args.get('concurrent') ?? 32;
const concurrentCalls = args.get('calls') ?? 4000;

const tag = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
const databaseUrl = `postgres://postgres@127.0.0.1:5432/agentexec_bench_${tag}`;
const port = 20_000 + Math.floor(Math.random() * 20_000);
const url = `http://127.0.0.1:${port}/api/exec/execAgent`;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function call(key: string, body: unknown): Promise<number> {
  const started = performance.now();
  const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
  const json = (await res.json()) as { resultCode?: string };
  if (json.resultCode !== 'success') throw new Error(`unexpected answer ${res.status} ${JSON.stringify(json)}`);
  return performance.now() - started;
}

async function main() {
  await ensureDatabase(databaseUrl);
  const db = createDb(databaseUrl, 2);
  await migrateToLatest(db);
  const compiled = await compileAgent(`export default async (sys) => sys.say('Hello, ' + (sys.query ?? 'world'))`);
  if (!compiled.ok) throw new Error('hello does not compile');
  await insertAgentVersion(db, 'hello', { source: '', code: compiled.code, sourceMap: compiled.sourceMap });
  const key = generateServiceAccountKey();
  await insertServiceAccount(db, { name: 'bench', role: 'user', plan: 'free', keyId: key.keyId, keyHash: key.secretHash });

  const distRoot = fileURLToPath(new URL('../', import.meta.url));
  const server = spawn(process.execPath, ['--no-node-snapshot', `${distRoot}cli/start.js`], {
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl, QUEUE_PREFIX: `agentexec-bench-${tag}`, PORT: String(port), LOG_LEVEL: 'warn', SECRETS_KEY: 'b'.repeat(32), SESSION_SECRET: 's'.repeat(32) },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  try {
    for (let i = 0; i < 100; i++) {
      try {
        await call(key.key, { agentName: 'hello' });
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    for (let i = 0; i < 200; i++) await call(key.key, { agentName: 'hello' }); // warm-up

    const latencies: number[] = [];
    for (let i = 0; i < sequential; i++) latencies.push(await call(key.key, { agentName: 'hello', inputs: { query: `n${i}` } }));
    latencies.sort((a, b) => a - b);

    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < concurrentCalls) await call(key.key, { agentName: 'hello' });
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const result = {
      sequential: { calls: sequential, p50Ms: +percentile(latencies, 50).toFixed(2), p99Ms: +percentile(latencies, 99).toFixed(2) },
      concurrent: { clients: concurrency, calls: concurrentCalls, callsPerSecond: Math.round(concurrentCalls / seconds) },
    };
    console.table({ 'sequential p50 ms': result.sequential.p50Ms, 'sequential p99 ms': result.sequential.p99Ms, [`${concurrency} clients calls/s`]: result.concurrent.callsPerSecond });
    console.log(JSON.stringify(result));
  } finally {
    server.kill('SIGTERM');
    await db.destroy();
    await new Promise((r) => server.once('exit', r));
    const admin = new pg.Client({ connectionString: databaseUrl.replace(/\/[^/]+$/, '/postgres') });
    await admin.connect();
    await admin.query(`drop database if exists agentexec_bench_${tag} with (force)`);
    await admin.end();
  }
}

await main();
