import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createClient, jsonOf, type ApiClient } from '../client.js';
import { createFixture, dropDatabase } from '../fixture.js';
import { deleteKeysWithPrefix } from '../redis-keys.js';
import { freePort, startStack, type ProductProcess } from '../stack.js';
import { runSequential, summarize } from '../stats.js';
import { cleanUpOnInterrupt, createTeardown } from '../teardown.js';

/**
 * `npm run bench:turns [-- --turns N --calls C]`: what a long conversation costs (DESIGN §14). Builds a
 * conversation of 1 turn and one of N (500), then times C calls of each kind, one at a time, on each:
 * execAgent continuing it, and /api/conv/get reading its last 100 turns. A turn is one appended row,
 * so both should cost the same on either; prints the p50/p99 and the ratio long ÷ short, writes
 * bench/turns-results.json.
 */

const redisUrl = 'redis://127.0.0.1:6379';
const postgresUrl = 'postgres://postgres@127.0.0.1:5432';
const log = (line: string) => process.stderr.write(`${line}\n`);
const agentName = 'counter';
const agentSource = `export default async function (sys) { sys.vars.n = (sys.vars.n ?? 0) + 1; sys.say('call ' + sys.vars.n + ': ' + sys.query); }`;

async function main(): Promise<void> {
  const { values } = parseArgs({ args: process.argv.slice(2), options: { turns: { type: 'string' }, calls: { type: 'string' } } });
  const longTurns = Number(values.turns ?? 500);
  const calls = Number(values.calls ?? 200);
  const tag = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const queuePrefix = `agentexec-turns-${tag}`;
  const databaseUrl = `${postgresUrl}/agentexec_turns_${tag}`;
  const teardown = createTeardown();
  cleanUpOnInterrupt(teardown, log);
  teardown.add(`delete Redis keys ${queuePrefix}*`, async () => `${await deleteKeysWithPrefix(redisUrl, queuePrefix)} deleted`);
  teardown.add('drop the database', () => dropDatabase(databaseUrl));
  try {
    const fixture = await createFixture(databaseUrl, { [agentName]: agentSource });
    const processes: ProductProcess[] = [];
    teardown.add('stop web and worker', () => Promise.all(processes.map((p) => p.stop(10_000))));
    const stack = await startStack({ databaseUrl, redisUrl, queuePrefix, port: await freePort(), maxAgentRuntimeMs: 60_000 }, (p) => processes.push(p));
    const client = createClient(stack.baseUrl, { bearerKey: fixture.bearerKey });
    teardown.add('close the HTTP client', () => client.close());

    const short = await conversationOf(client, 1);
    log(`building a conversation of ${longTurns} turns`);
    const long = await conversationOf(client, longTurns);
    const results: Record<string, unknown> = { at: new Date().toISOString(), longTurns, calls };
    for (const [name, call] of [
      ['execAgent', (convid: string) => client.post('/api/exec/execAgent', { agentName, convid, inputs: { query: 'again' } })],
      ['conv/get', (convid: string) => client.post('/api/conv/get', { convid, limit: 100 })],
    ] as const) {
      // Alternate short and long so the machine's drift hits both alike.
      const times = { short: [] as number[], long: [] as number[] };
      await runSequential(calls * 2, async (i) => {
        const which = i % 2 === 0 ? 'short' : 'long';
        const started = performance.now();
        const answer = await call(which === 'short' ? short : long);
        if (answer.status !== 200) throw new Error(`${name}: HTTP ${answer.status} ${answer.text.slice(0, 200)}`);
        times[which].push(performance.now() - started);
      });
      const [s, l] = [summarize(times.short), summarize(times.long)];
      results[name] = { short: { p50: round(s.p50), p99: round(s.p99) }, long: { p50: round(l.p50), p99: round(l.p99) }, p50Ratio: round(l.p50 / s.p50) };
    }
    console.log(JSON.stringify(results, null, 2));
    writeFileSync(new URL('../../../bench/turns-results.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
  } finally {
    for (const line of await teardown.run()) log(line);
  }
}

/** A new conversation with `turns` calls in it; answers its convid. */
async function conversationOf(client: ApiClient, turns: number): Promise<string> {
  const first = jsonOf<{ convid: string }>(await client.post('/api/exec/execAgent', { agentName, inputs: { query: 'turn 1' } }));
  for (let i = 2; i <= turns; i++) await client.post('/api/exec/execAgent', { agentName, convid: first.convid, inputs: { query: `turn ${i}` } });
  return first.convid;
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    log(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(1);
  },
);
