import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createDb, ensureDatabase, migrateToLatest } from '../../db/database.js';
import { createLogger } from '../../shared/logger.js';
import { systemClock } from '../../shared/clock.js';
import { sweepExpired } from '../../workers/maintenance/retention-sweep.js';
import { createClient, type ApiClient } from '../client.js';
import { execAgent } from '../exec.js';
import { createFixture, dropDatabase } from '../fixture.js';
import { deleteKeysWithPrefix } from '../redis-keys.js';
import { freePort, startStack } from '../stack.js';
import { summarize, type LatencySummary } from '../stats.js';
import { cleanUpOnInterrupt, createTeardown } from '../teardown.js';
import { countRows, insertBulkConversations } from './bulk-data.js';
import { formatRunListReport, insertBulkExecutions, timeRunList } from './run-list.js';

/**
 * `npm run bench:scale [-- --quick]`: what a large database costs a call. Starting a conversation and
 * resuming one at an ask are timed on an empty database, then again with 1,000,000 conversations of
 * which 100,000 are paused (ratio = full / empty); then while the retention sweep deletes the expired
 * ones (about 30%), calls are timed again, to show the sweep does not hold them up. Writes
 * bench/scale-results.json. With `--run-list`, the console's list of runs instead (run-list.ts):
 * writes bench/scale-run-list-results.json.
 */

const projectRoot = fileURLToPath(new URL('../../../', import.meta.url));
const redisUrl = 'redis://127.0.0.1:6379';
const postgresUrl = 'postgres://postgres@127.0.0.1:5432';
const log = (line: string) => process.stderr.write(`${line}\n`);

const agents = {
  starter: `export default async (sys) => { sys.vars.n = (sys.vars.n ?? 0) + 1; sys.say('n=' + sys.vars.n); }`,
  asker: `export default async (sys) => { const a = await sys.ask({ message: 'Name?', inputs: [{ name: 'name', type: 'str' }] }); sys.say('hi ' + a.name); }`,
};

interface Timings {
  start: LatencySummary;
  resume: LatencySummary;
}

async function main(): Promise<number> {
  const { values } = parseArgs({ args: process.argv.slice(2), options: { quick: { type: 'boolean' }, 'run-list': { type: 'boolean' } } });
  const quick = values.quick === true;
  if (values['run-list']) return benchRunList(quick);
  const counts = quick ? { conversations: 100_000, paused: 10_000 } : { conversations: 1_000_000, paused: 100_000 };
  const calls = quick ? 100 : 300;
  const tag = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const queuePrefix = `agentexec-scale-${tag}`;
  const databaseUrl = `${postgresUrl}/agentexec_scale_${tag}`;
  const teardown = createTeardown();
  cleanUpOnInterrupt(teardown, log);
  teardown.add(`delete Redis keys ${queuePrefix}*`, async () => `${await deleteKeysWithPrefix(redisUrl, queuePrefix)} deleted`);
  teardown.add(`drop database agentexec_scale_${tag}`, () => dropDatabase(databaseUrl));
  try {
    const { bearerKey } = await createFixture(databaseUrl, agents);
    const settings = { databaseUrl, redisUrl, queuePrefix, port: await freePort(), workerConcurrency: 16, maxAgentRuntimeMs: 10_000 };
    const stack = await startStack(settings, (p) => teardown.add(`stop ${p.name}`, () => p.stop(20_000)));
    const client = createClient(stack.baseUrl, { bearerKey });
    teardown.add('close the HTTP client', () => client.close());
    const db = createDb(databaseUrl, 4);
    teardown.add('close the database pool', () => db.destroy());
    await execAgent(client, { agentName: 'starter' });

    log('▸ warming up (JIT, warm isolates, connections), untimed');
    await timeCalls(client, calls);
    log(`▸ empty database: ${calls} starts and ${calls} resumes, one at a time`);
    const empty = await timeCalls(client, calls);
    log(`▸ filling: ${counts.conversations} conversations, ${counts.paused} paused`);
    const fillStarted = performance.now();
    await insertBulkConversations(db, counts);
    const fillSeconds = (performance.now() - fillStarted) / 1000;
    const rows = await countRows(db);
    log(`  ${JSON.stringify(rows)} in ${fillSeconds.toFixed(0)} s`);
    log('▸ full database: the same calls');
    const full = await timeCalls(client, calls);

    log('▸ retention sweep, with calls going');
    const sweepLogger = createLogger('warn');
    let sweepSeconds = 0;
    let swept = 0;
    const sweep = (async () => {
      const started = performance.now();
      swept = (await sweepExpired({ config: { sessionIdleMinutes: 30, sessionMaxHours: 12 }, db, clock: systemClock, logger: sweepLogger })).conversations;
      sweepSeconds = (performance.now() - started) / 1000;
    })();
    const duringSweep = await timeWhile(client, sweep);
    const results = {
      rows,
      fillSeconds,
      empty,
      full,
      ratio: { start: full.start.p50 / empty.start.p50, resume: full.resume.p50 / empty.resume.p50 },
      sweep: { deleted: swept, seconds: sweepSeconds, startsDuring: duringSweep, p50VersusFull: duringSweep.p50 / full.start.p50 },
    };
    writeFileSync(`${projectRoot}bench/scale-results.json`, `${JSON.stringify(results, null, 2)}\n`);
    process.stdout.write(`${formatReport(results)}\n`);
    return 0;
  } catch (err) {
    log(`scale bench could not finish: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 2;
  } finally {
    for (const line of await teardown.run()) log(`  ${line}`);
  }
}

/** The run-list mode: a database of its own, 1,000 execution records then 1,000,000 (100,000 with --quick). */
async function benchRunList(quick: boolean): Promise<number> {
  const sizes = { small: 1_000, large: quick ? 100_000 : 1_000_000 };
  const rounds = 300;
  const databaseUrl = `${postgresUrl}/agentexec_scale_runs_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const teardown = createTeardown();
  cleanUpOnInterrupt(teardown, log);
  teardown.add(`drop database ${new URL(databaseUrl).pathname.slice(1)}`, () => dropDatabase(databaseUrl));
  try {
    await ensureDatabase(databaseUrl);
    const db = createDb(databaseUrl, 2);
    teardown.add('close the database pool', () => db.destroy());
    await migrateToLatest(db);
    log(`▸ ${sizes.small} execution records`);
    await insertBulkExecutions(db, 1, sizes.small);
    const small = await timeRunList(db, rounds);
    log(`▸ filling to ${sizes.large} execution records`);
    const fillStarted = performance.now();
    await insertBulkExecutions(db, sizes.small + 1, sizes.large);
    const fillSeconds = (performance.now() - fillStarted) / 1000;
    log(`  filled in ${fillSeconds.toFixed(0)} s`);
    const large = await timeRunList(db, rounds);
    const ratios = Object.fromEntries(Object.keys(small).map((name) => [name, large[name]!.p50 / small[name]!.p50]));
    writeFileSync(`${projectRoot}bench/scale-run-list-results.json`, `${JSON.stringify({ sizes, rounds, fillSeconds, small, large, ratios }, null, 2)}\n`);
    process.stdout.write(`${formatRunListReport(small, large, sizes)}\n`);
    return Object.values(ratios).every((ratio) => ratio <= 2) ? 0 : 1;
  } catch (err) {
    log(`run-list bench could not finish: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 2;
  } finally {
    for (const line of await teardown.run()) log(`  ${line}`);
  }
}

/** `calls` new conversations, then `calls` answers to asks made beforehand (only the answers are timed). */
async function timeCalls(client: ApiClient, calls: number): Promise<Timings> {
  const starts: number[] = [];
  for (let i = 0; i < calls; i++) starts.push(await timed(() => execAgent(client, { agentName: 'starter' })));
  const asked: string[] = [];
  for (let i = 0; i < calls; i++) asked.push((await execAgent(client, { agentName: 'asker' }, 'ask')).convid);
  const resumes: number[] = [];
  for (const convid of asked) resumes.push(await timed(() => execAgent(client, { agentName: 'asker', convid, inputs: { name: 'Ada' } })));
  return { start: summarize(starts), resume: summarize(resumes) };
}

/** Starts conversations one at a time until `running` settles. */
async function timeWhile(client: ApiClient, running: Promise<void>): Promise<LatencySummary> {
  let done = false;
  void running.finally(() => (done = true));
  const latencies: number[] = [];
  while (!done) latencies.push(await timed(() => execAgent(client, { agentName: 'starter' })));
  await running;
  return summarize(latencies);
}

async function timed(call: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await call();
  return performance.now() - started;
}

function formatReport(r: { rows: { conversations: number; paused: number }; fillSeconds: number; empty: Timings; full: Timings; ratio: { start: number; resume: number }; sweep: { deleted: number; seconds: number; startsDuring: LatencySummary; p50VersusFull: number } }): string {
  const line = (name: string, empty: LatencySummary, full: LatencySummary, ratio: number) =>
    `  ${name.padEnd(8)} ${empty.p50.toFixed(2).padStart(8)} ${empty.p99.toFixed(2).padStart(8)} ${full.p50.toFixed(2).padStart(8)} ${full.p99.toFixed(2).padStart(8)} ${ratio.toFixed(2).padStart(7)}×`;
  return [
    `scale: ${r.rows.conversations} conversations, ${r.rows.paused} paused (filled in ${r.fillSeconds.toFixed(0)} s)`,
    `  ${'call'.padEnd(8)} ${'empty p50'.padStart(8)} ${'p99'.padStart(8)} ${'full p50'.padStart(8)} ${'p99'.padStart(8)} ${'ratio'.padStart(8)}`,
    line('start', r.empty.start, r.full.start, r.ratio.start),
    line('resume', r.empty.resume, r.full.resume, r.ratio.resume),
    `sweep: ${r.sweep.deleted} expired conversations deleted in ${r.sweep.seconds.toFixed(1)} s; ${r.sweep.startsDuring.count} starts meanwhile, p50 ${r.sweep.startsDuring.p50.toFixed(2)} ms (${r.sweep.p50VersusFull.toFixed(2)}× the full database's), p99 ${r.sweep.startsDuring.p99.toFixed(2)} ms, max ${r.sweep.startsDuring.max.toFixed(2)} ms`,
  ].join('\n');
}

process.exitCode = await main();
