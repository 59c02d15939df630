import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { benchAgents } from './agents.js';
import { createClient } from './client.js';
import { describeEnvironment } from './environment.js';
import { execAgent } from './exec.js';
import { createFixture, dropDatabase } from './fixture.js';
import { measureFloor, type Floor } from './floor.js';
import { parseOptions, type Options, type Profile } from './options.js';
import { deleteKeysWithPrefix } from './redis-keys.js';
import { evaluate, floorMeasurements, formatReport, summarizeResults, writeResults, type Results } from './report.js';
import { medianFloor, medianMeasurements, roundNotes, type Round } from './rounds.js';
import { runScenarios, type Measurement, type Scenario, type ScenarioContext } from './scenario.js';
import { warmUpStack } from './stack-warm-up.js';
import { askAnswer } from './scenarios/ask.js';
import { cancelLatency } from './scenarios/cancel.js';
import { childCall } from './scenarios/child-call.js';
import { clientCost } from './scenarios/client-cost.js';
import { conversationSequential, conversationShared } from './scenarios/conversation.js';
import { helloConcurrent, helloPaired, helloSequential } from './scenarios/hello.js';
import { helloKeyed } from './scenarios/hello-keyed.js';
import { openStreams } from './scenarios/open-streams.js';
import { streaming } from './scenarios/streaming.js';
import { submitConcurrent, submitSequential } from './scenarios/submit.js';
import { freePort, startStack, type ProductProcess } from './stack.js';
import { withTimeout } from './stats.js';
import { cleanUpOnInterrupt, createTeardown, type Teardown } from './teardown.js';

/**
 * `npm run bench [-- --quick] [-- --strict] [-- --only ids] [-- --rounds N] [-- --cold]`: the floor (a
 * raw BullMQ round trip), then execAgent through the product run as the Procfile runs it (one web and
 * one worker process) on a database and queue prefix of its own, warmed up first unless `--cold`
 * (bench/stack-warm-up.ts); prints a table and writes bench/results.json. With `--rounds N`, the stack
 * first, then N rounds of floor and scenarios, reported as medians (bench/rounds.ts). DESIGN §10 has
 * the floor figures to expect on this kind of machine.
 */

const projectRoot = fileURLToPath(new URL('../../', import.meta.url));
const resultsPath = `${projectRoot}bench/results.json`;
const redisUrl = 'redis://127.0.0.1:6379';
const postgresUrl = 'postgres://postgres@127.0.0.1:5432';
/** Cuts the spinning agent when a cancel fails; the sleeper agent (8 s) stays under it. */
const maxAgentRuntimeMs = 10_000;

/** The scenarios to run: all, or the ones `--only` names (an unknown id stops the bench, naming the known ones). */
function scenarios(profile: Profile, only: string[] | undefined): Scenario[] {
  const all = [clientCost, helloSequential, helloPaired, helloConcurrent, helloKeyed, conversationSequential, conversationShared, askAnswer, childCall, streaming, cancelLatency, openStreams(profile), submitSequential, submitConcurrent];
  if (!only) return all;
  const unknown = only.filter((id) => !all.some((scenario) => scenario.id === id));
  if (unknown.length > 0) throw new Error(`unknown scenario ${unknown.join(', ')}; the scenarios are ${all.map((scenario) => scenario.id).join(', ')}`);
  return all.filter((scenario) => only.includes(scenario.id));
}

/** What the steps gathered; kept when a later step fails, so the report shows what was measured. */
interface Gathered {
  floor: Floor | null;
  measurements: Measurement[];
  notes: Record<string, string[]>;
  processes: ProductProcess[];
  /** With `--rounds N` (N > 1): each round's floor and measurements, reported as medians instead. */
  rounds: Round[];
}

interface Names {
  tag: string;
  queuePrefix: string;
  databaseUrl: string;
}

const log = (line: string) => process.stderr.write(`${line}\n`);
const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const chosen = scenarios(options.profile, options.only);
  const tag = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const names: Names = { tag, queuePrefix: `agentexec-bench-${tag}`, databaseUrl: `${postgresUrl}/agentexec_bench_${tag}` };
  const environment = describeEnvironment(options.profile.name, projectRoot);
  const teardown = createTeardown();
  cleanUpOnInterrupt(teardown, log);
  teardown.add(`delete Redis keys ${names.queuePrefix}*`, async () => `${await deleteKeysWithPrefix(redisUrl, names.queuePrefix)} deleted`);

  const gathered: Gathered = { floor: null, measurements: [], notes: {}, processes: [], rounds: [] };
  const measure = options.rounds > 1 ? gatherRounds : gather;
  const fatal = await measure(gathered, options, chosen, names, teardown).then(
    () => undefined,
    (err: unknown) => {
      log(`bench could not finish: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      for (const p of gathered.processes) if (p.tail()) log(`--- ${p.name} output (tail) ---\n${p.tail()}`);
      return messageOf(err);
    },
  );
  const results = resultsOf(gathered, environment, fatal, await teardown.run());
  // A partial run (--only) leaves the recorded results of the last whole run as they are.
  if (!options.only) writeResults(resultsPath, results);
  process.stdout.write(`${formatReport(results)}\n\n${options.only ? 'not written (--only)' : `written to ${resultsPath}`}\n`);
  if (fatal) return 2;
  const clean = results.summary.targetsMissed === 0 && results.summary.failedMeasurements === 0;
  return options.strict && !clean ? 1 : 0;
}

/** The floor, then the product's stack and the scenarios against it. */
async function gather(gathered: Gathered, options: Options, chosen: Scenario[], names: Names, teardown: Teardown): Promise<void> {
  const floor = await floorOf(options.profile, names);
  gathered.floor = floor.figures;
  gathered.measurements.push(...floorMeasurements(floor.figures, floor.error));

  log('▸ setting up: database, agents, key, web and worker processes');
  const context = await setUpStack(options, names, teardown, gathered);
  const run = await runScenarios(chosen, context, log);
  gathered.measurements.push(...run.measurements);
  gathered.notes = { ...gathered.notes, ...run.notes };
}

/**
 * `--rounds N`: the product's stack, then N rounds of the floor and the scenarios against it, each
 * round evaluated against its own floor (bench/rounds.ts combines them). The stack stands idle while
 * each floor is measured, in every round alike.
 */
async function gatherRounds(gathered: Gathered, options: Options, chosen: Scenario[], names: Names, teardown: Teardown): Promise<void> {
  const { profile, rounds } = options;
  log('▸ setting up: database, agents, key, web and worker processes');
  const context = await setUpStack(options, names, teardown, gathered);
  for (let round = 1; round <= rounds; round++) {
    log(`▸ round ${round} of ${rounds}`);
    const floor = await floorOf(profile, names);
    const run = await runScenarios(chosen, context, log);
    gathered.rounds.push({ floor: floor.figures, measurements: evaluate([...floorMeasurements(floor.figures, floor.error), ...run.measurements], floor.figures) });
    for (const [id, notes] of Object.entries(run.notes)) gathered.notes[id] = [...(gathered.notes[id] ?? []), ...notes.map((note) => `round ${round}: ${note}`)];
  }
}

async function floorOf(profile: Profile, names: Names): Promise<{ figures: Floor | null; error?: string }> {
  log(`▸ (a) floor: raw BullMQ round trip (${profile.name} profile)`);
  const floor = await measureFloor(redisUrl, names.queuePrefix, profile).then(
    (figures) => ({ figures, error: undefined }),
    (err: unknown) => ({ figures: null, error: messageOf(err) }),
  );
  if (floor.error) log(`  failed: ${floor.error}`);
  return floor;
}

/**
 * Database, agents and key; web and worker processes; a client; a first call that proves the worker
 * runs; then, unless `--cold`, the warm-up calls (its note goes with the results).
 */
async function setUpStack({ profile, cold }: Options, names: Names, teardown: Teardown, { processes, notes }: Gathered): Promise<ScenarioContext> {
  teardown.add(`drop database agentexec_bench_${names.tag}`, () => dropDatabase(names.databaseUrl));
  const { bearerKey } = await createFixture(names.databaseUrl, benchAgents);
  const settings = { databaseUrl: names.databaseUrl, redisUrl, queuePrefix: names.queuePrefix, port: await freePort(), maxAgentRuntimeMs };
  const stack = await startStack(settings, (spawned) => {
    processes.push(spawned);
    teardown.add(`stop ${spawned.name} (pid ${spawned.pid})`, () => spawned.stop(20_000));
  });
  const client = createClient(stack.baseUrl, { bearerKey });
  teardown.add('close the HTTP client', () => client.close());
  // Also waits for the worker process to take jobs.
  await withTimeout(execAgent(client, { agentName: 'hello' }), 30_000, 'the first execAgent call');
  if (cold) {
    notes.stack = ['measured cold (--cold): no warm-up calls before the scenarios'];
  } else {
    log(`▸ warming the stack: ${profile.stackWarmupCalls} hello calls, ${profile.concurrency} in flight (--cold skips this)`);
    notes.stack = [await warmUpStack(client, profile)];
  }
  return { profile, stack, client, bearerKey };
}

function resultsOf(gathered: Gathered, environment: Results['environment'], fatal: string | undefined, teardown: string[]): Results {
  const { rounds } = gathered;
  const measurements = rounds.length > 0 ? medianMeasurements(rounds) : evaluate(gathered.measurements, gathered.floor);
  return {
    environment,
    ...(rounds.length > 0 ? { rounds: rounds.length } : {}),
    ...(fatal ? { fatal } : {}),
    floor: rounds.length > 0 ? medianFloor(rounds) : gathered.floor,
    measurements,
    notes: rounds.length > 0 ? { ...gathered.notes, rounds: roundNotes(rounds) } : gathered.notes,
    productOutput: Object.fromEntries(gathered.processes.map((p) => [p.name, p.problems()])),
    teardown,
    summary: summarizeResults(measurements),
  };
}

process.exitCode = await main();
