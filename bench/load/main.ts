import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createDb } from '../../db/database.js';
import { createClient, type ApiClient } from '../client.js';
import { execAgent } from '../exec.js';
import { withCpuCost, type CpuCost } from '../cpu.js';
import { cpuPerCall } from '../scenarios/cpu-rows.js';
import { createFixture, dropDatabase } from '../fixture.js';
import { deleteKeysWithPrefix } from '../redis-keys.js';
import { freePort, startCluster, type ProductProcess } from '../stack.js';
import { withTimeout } from '../stats.js';
import { cleanUpOnInterrupt, createTeardown } from '../teardown.js';
import { loadAgents } from './agents.js';
import { createLedger } from './ledger.js';
import { createTally } from './tally.js';
import { verifyConversations } from './verify.js';
import { runWebhookBurst, type BurstReport } from './webhook-burst.js';
import { pickWorkflow, type LoadContext } from './workflows.js';

/**
 * `npm run loadtest [-- --quick] [-- --calls N --clients N --max-seconds S --burst N]`: 2 web and
 * 2 worker processes on a database and queue prefix of their own, on loopback; `--clients` callers mix
 * plain calls, conversations, streamed calls, ask → answer and cancels until `--calls` calls were
 * made. Every answer is checked as it comes, and at the end every conversation's variables, history,
 * pause and execution records are compared with what its calls imply. Then the webhook burst
 * (webhook-burst.ts): `--burst` background runs (10,000; 1,000 with --quick) whose webhooks must all
 * arrive once, the receiver restarted midway. Exits 1 on any failure. `--postgres-url` names the
 * PostgreSQL server (no database: the test makes its own there), e.g. a PgBouncer in front of it.
 */

const redisUrl = 'redis://127.0.0.1:6379';
const defaultPostgresUrl = 'postgres://postgres@127.0.0.1:5432';
const log = (line: string) => process.stderr.write(`${line}\n`);

interface LoadOptions {
  calls: number;
  clients: number;
  maxSeconds: number;
  /** Background runs in the webhook burst. */
  burst: number;
  /** The PostgreSQL server everything connects to, without a database (a PgBouncer in front of it, say). */
  postgresUrl: string;
}

function parseOptions(argv: string[]): LoadOptions {
  const { values } = parseArgs({
    args: argv,
    options: { quick: { type: 'boolean' }, calls: { type: 'string' }, clients: { type: 'string' }, 'max-seconds': { type: 'string' }, burst: { type: 'string' }, 'postgres-url': { type: 'string' } },
  });
  const number = (name: string, value: string | undefined, fallback: number) => {
    const parsed = value === undefined ? fallback : Number(value);
    if (!Number.isInteger(parsed) || parsed < 1) throw new Error(`--${name} must be a positive whole number`);
    return parsed;
  };
  const quick = values.quick === true;
  return {
    calls: number('calls', values.calls, quick ? 2_000 : 20_000),
    clients: number('clients', values.clients, quick ? 50 : 200),
    maxSeconds: number('max-seconds', values['max-seconds'], quick ? 120 : 600),
    burst: number('burst', values.burst, quick ? 1_000 : 10_000),
    postgresUrl: serverUrl(values['postgres-url'] ?? defaultPostgresUrl),
  };
}

/** A postgres:// URL of a server, without a database; a trailing slash dropped. */
function serverUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error('--postgres-url must be a postgres:// URL');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') throw new Error('--postgres-url must be a postgres:// URL');
  if (url.pathname.length > 1 || url.search) throw new Error('--postgres-url names a server, not a database (postgres://user@host:port)');
  return value.replace(/\/$/, '');
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const tag = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const queuePrefix = `agentexec-load-${tag}`;
  const databaseUrl = `${options.postgresUrl}/agentexec_load_${tag}`;
  const teardown = createTeardown();
  cleanUpOnInterrupt(teardown, log);
  teardown.add(`delete Redis keys ${queuePrefix}*`, async () => `${await deleteKeysWithPrefix(redisUrl, queuePrefix)} deleted`);
  teardown.add(`drop database agentexec_load_${tag}`, () => dropDatabase(databaseUrl));
  const processes: ProductProcess[] = [];
  try {
    log(`▸ setting up: database, agents, key, 2 web and 2 worker processes`);
    const { bearerKey } = await createFixture(databaseUrl, loadAgents);
    const secretsKey = randomBytes(32).toString('base64url');
    const settings = { databaseUrl, redisUrl, queuePrefix, port: 0, maxAgentRuntimeMs: 10_000, env: { SECRETS_KEY: secretsKey, WEBHOOK_ALLOW: '127.0.0.1' } };
    const webPorts = [await freePort(), await freePort()];
    const cluster = await startCluster(settings, { webPorts, workers: 2 }, (spawned) => {
      processes.push(spawned);
      teardown.add(`stop ${spawned.name} (pid ${spawned.pid})`, () => spawned.stop(20_000));
    });
    const clients = cluster.baseUrls.map((url) => createClient(url, { bearerKey, maxSockets: options.clients }));
    teardown.add('close the HTTP clients', () => clients.forEach((c) => c.close()));
    for (const client of clients) await withTimeout(execAgent(client, { agentName: 'ltCounter', inputs: { query: 'warm' } }), 30_000, 'the first call');

    log(`▸ load: ${options.clients} clients until ${options.calls} calls (at most ${options.maxSeconds} s)`);
    // Where the cores go during the load: the product's processes by kind, this load generator, the rest (PostgreSQL, Redis).
    const cpu = await withCpuCost(processes.map((p) => p.pid), () => runLoad(clients, options));
    const outcome = cpu.result;
    log('▸ checking every conversation against its calls');
    const db = createDb(databaseUrl, 4);
    teardown.add('close the database pool', () => db.destroy());
    const verified = await verifyConversations(db, outcome.context.ledger);
    log(`▸ webhook burst: ${options.burst} background runs at once, the receiver restarted midway`);
    const burst = await runWebhookBurst({ clients, db, secretsKey, runs: options.burst, maxSeconds: options.maxSeconds, log });
    const problems = processes.flatMap((p) => p.problems().map((line) => `${p.name}: ${line}`)).slice(0, 20);
    const burstFailures = burst.runs - burst.delivered + burst.duplicates + burst.badSignatures;
    const failed = outcome.context.tally.failures() + verified.mismatches.length + outcome.unfinished + burstFailures;
    process.stdout.write(`${formatReport(options, outcome, verified, problems, byKind(processes, cpu))}\n${formatBurst(burst)}\n`);
    return failed === 0 ? 0 : 1;
  } catch (err) {
    log(`load test could not finish: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    for (const p of processes) if (p.tail()) log(`--- ${p.name} output (tail) ---\n${p.tail()}`);
    return 2;
  } finally {
    for (const line of await teardown.run()) log(`  ${line}`);
  }
}

interface LoadOutcome {
  context: LoadContext;
  seconds: number;
  /** Workflows still running when the time was up. */
  unfinished: number;
}

/** Runs the clients: each starts a workflow whenever its last one ended, until enough calls were made. */
async function runLoad(clients: ApiClient[], options: LoadOptions): Promise<LoadOutcome> {
  const context: LoadContext = { clients, ledger: createLedger(), tally: createTally(), random: Math.random, callTimeoutMs: 30_000 };
  const started = performance.now();
  const deadline = started + options.maxSeconds * 1000;
  let running = 0;
  let stopped = false;
  const client = async () => {
    while (!stopped && context.tally.calls() < options.calls && performance.now() < deadline) {
      const workflow = pickWorkflow(context.random);
      running += 1;
      try {
        await workflow.run(context);
      } catch (err) {
        context.tally.fail(workflow.name, err instanceof Error ? err.message : String(err));
      } finally {
        running -= 1;
      }
    }
  };
  const progress = setInterval(() => log(`  ${context.tally.calls()} calls, ${context.tally.failures()} failures`), 5_000);
  const all = Promise.all(Array.from({ length: options.clients }, client));
  // Past the deadline, workflows still running count as unfinished (each call has its own timeout too).
  const finished = await Promise.race([all.then(() => true), new Promise<false>((resolve) => setTimeout(() => resolve(false), options.maxSeconds * 1000 + 60_000).unref())]);
  clearInterval(progress);
  stopped = true;
  return { context, seconds: (performance.now() - started) / 1000, unfinished: finished ? 0 : running };
}

function formatBurst(burst: BurstReport): string {
  return [
    `webhook burst: ${burst.accepted} of ${burst.runs} background runs accepted; ${burst.delivered} webhooks delivered in ${burst.seconds.toFixed(1)} s`,
    `  (receiver down ${burst.receiverDownSeconds.toFixed(1)} s midway), duplicates: ${burst.duplicates}, bad signatures: ${burst.badSignatures}, missing: ${burst.runs - burst.delivered}`,
  ].join('\n');
}

/** The load's CPU with the product's processes added up by kind, in cpuPerCall's order: [web processes, workers]. */
function byKind<T>(processes: ProductProcess[], cpu: CpuCost<T>): CpuCost<T> {
  const of = (kind: string) => processes.reduce((sum, p, i) => (p.name.startsWith(kind) ? sum + cpu.processMs[i]! : sum), 0);
  return { ...cpu, processMs: [of('web'), of('worker')] };
}

function formatReport(
  options: LoadOptions,
  outcome: LoadOutcome,
  verified: { checked: number; uncertain: number; mismatches: string[] },
  problems: string[],
  cpu: CpuCost<unknown>,
): string {
  const { tally } = outcome.context;
  const rows = tally.report().map(({ kind, latency, failures }) =>
    `  ${kind.padEnd(12)} ${String(latency.count).padStart(7)} ${latency.p50.toFixed(1).padStart(9)} ${latency.p99.toFixed(1).padStart(9)} ${latency.max.toFixed(1).padStart(9)} ${String(failures).padStart(8)}`,
  );
  return [
    `load test: ${options.clients} clients, 2 web + 2 worker processes, PostgreSQL at ${options.postgresUrl}`,
    `calls: ${tally.calls()} in ${outcome.seconds.toFixed(1)} s = ${(tally.calls() / outcome.seconds).toFixed(0)} calls/s`,
    `  ${'kind'.padEnd(12)} ${'calls'.padStart(7)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)} ${'max ms'.padStart(9)} ${'failures'.padStart(8)}`,
    ...rows,
    `CPU per call (µs, during the load): ${Object.entries(cpuPerCall(cpu, tally.calls(), 'cpu')).map(([id, us]) => `${id.slice('cpu.'.length)} ${Math.round(us)}`).join(', ')} (bench: this load generator; rest: PostgreSQL, Redis, others); machine busy ${(cpu.machineMs / 1000 / outcome.seconds).toFixed(2)} cores`,
    `cancelled calls whose run ended before a cancel reached it (kept, not failures): ${tally.lateCancels()}`,
    `failures: ${tally.failures()}${tally.samples().length ? `\n  ${tally.samples().join('\n  ')}` : ''}`,
    `unfinished workflows at the time limit: ${outcome.unfinished}`,
    `conversations checked: ${verified.checked} (${verified.uncertain} left out: a call on them got no answer), mismatches: ${verified.mismatches.length}${verified.mismatches.length ? `\n  ${verified.mismatches.join('\n  ')}` : ''}`,
    `warnings logged by the processes: ${problems.length}${problems.length ? `\n  ${problems.join('\n  ')}` : ''}`,
  ].join('\n');
}

process.exitCode = await main();
