import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createClient } from '../client.js';
import { coresOver, cpuBetween, readCpu, type CpuReading } from '../cpu.js';
import { createFixture, dropDatabase } from '../fixture.js';
import { deleteKeysWithPrefix } from '../redis-keys.js';
import { readRssMb, sampleRssPeak } from '../rss.js';
import { readSyscalls, syscallsPer, type SyscallCount } from '../syscalls.js';
import { freePort, startStack, type ProductProcess } from '../stack.js';
import { summarize } from '../stats.js';
import { cleanUpOnInterrupt, createTeardown } from '../teardown.js';
import { agentName, driveClients, relayFigures, streamedCall, wholeCall, type ClientTiming } from './calls.js';
import { burstTargets, driveBurst, firstCallPhases, targetLines, type BurstRun } from './burst.js';
import { startLlmLikeServer } from './llm-server.js';
import { measureRelayFloor, relayFloorKinds, type RelayFloorKind, type RelayFloorReading } from './relay-floor.js';

/**
 * `npm run bench:io [-- --clients C --seconds T --warmup W --duration D --worker-concurrency N --stream
 * [--per-token] [--floors] --fan-out F --tokens K --profile S --profile-dir DIR --burst]`: waiting runs (DESIGN §11). A loopback server answers like an LLM
 * (first byte after 300 ms, the body streamed in K pieces, 20 unless told, until T s); an agent awaits
 * it; C clients, started spread over T s, each continue a conversation of their own, call after call,
 * for W s untimed (0 unless told) and D s more, against one web and one worker process at default settings. Prints runs/s against the
 * limit C / T, the latency added to T (p50, p99), the cores worker, web, this process and the whole
 * machine used in the timed window, the read and write system calls web and worker made per run in it
 * (bench/syscalls.ts), the most PostgreSQL connections open at once, each process's RSS peak,
 * event-loop delay p99 and garbage-collection pauses (count, total, longest; its own heap; this
 * process's too, as it is the LLM-like server and every client), and errors;
 * writes bench/io-results.json.
 *
 * `--stream` (DESIGN §13): the server speaks the chat-completions stream format, the agent reads it
 * with `stream: true` and relays each token as it arrives (`relay({field})`, as agents/chat.ts does),
 * and the clients call with `stream: true`. `--per-token`: the agent's own code takes each event
 * instead (`for await (const event of answer.events()) sys.write(...)`).
 * Adds the token relay time, from the server writing a token to the client reading it in a `delta`
 * event (p50, p99, over every token of the timed calls), and the same for each answer's first token
 * alone (what a chat's reader waits for first); writes bench/io-stream-results.json.
 *
 * `--floors` (with `--stream`): then, with web and worker stopped, the same clients over the same spread,
 * warm-up and window against two relay floors (relay-floor.ts): one process between upstream and client
 * (`direct`), and a front, a Redis list, a runner and pub/sub (`pubsub`: the product's hops doing
 * nothing else). Adds `floors` (each one's relay, runs/s and cores) and `relayToFloor` (the product's
 * relay p50 and p99 over each floor's), which hold still while the machine's speed does not.
 *
 * `--fan-out F` (DESIGN §19): each call's agent is a parent that runs F children at once with
 * `sys.call`, each child the agent above (it awaits the LLM-like server); runs/s and the limit count
 * the parents, the added latency is the parent's. Every child waits T s too, so the worker holds
 * C × (F + 1) runs at the peak: give it `--worker-concurrency` for them (a parent waiting on its
 * children lends them its place). Adds `fanOut`: the runs held at the peak, the worker's RSS idle and
 * per waiting run ((peak − idle) / runs), and issue 51's three figures beside their targets (≥ 0.9 ×
 * the limit, ≤ 20 PostgreSQL connections, worker RSS ≤ 2,048 MB, for `--clients 1000 --fan-out 10`).
 * Writes bench/io-fanout-results.json.
 *
 * `--profile S`: CPU-profiles the first S s of the timed window in web and worker, written as
 * `worker.cpuprofile` and `web.cpuprofile` in `--profile-dir` (default: the current directory).
 *
 * `--burst` (burst.ts): first, on the freshly started stack and with no warm-up, every client starts at
 * the same instant, makes its conversation and continues it for D s, every call timed from its first;
 * then the steady state above with the same clients and conversations. Adds `burst` (added latency
 * p50/p99/max, the first calls' alone, where the calls' time went, and the burst's added p99 over the
 * steady state's) and `targets` (each figure beside its target, also printed) to the results, written
 * as bench/io-burst-results.json (or the --stream / --fan-out file's name with `-burst`). With
 * `--profile S`, the profiles are of the burst's first S s.
 */

const redisUrl = 'redis://127.0.0.1:6379';
const postgresUrl = 'postgres://postgres@127.0.0.1:5432';
const log = (line: string) => process.stderr.write(`${line}\n`);
const agentSource = `export default async function (sys) {
  const answer = await sys.fetch(sys.inputs.url, { timeoutMs: 120000 });
  sys.vars.calls = (sys.vars.calls ?? 0) + 1;
  sys.say(answer.text.length + ' characters');
}`;

const streamingAgentSource = `export default async function (sys) {
  const answer = await sys.fetch(sys.inputs.url, { method: 'POST', body: '{"stream":true}', stream: true, timeoutMs: 120000 });
  await answer.relay({ field: 'choices.0.delta.content' });
  sys.vars.calls = (sys.vars.calls ?? 0) + 1;
}`;

/** `--per-token`: the same agent taking each event in its own code. */
const perTokenAgentSource = `export default async function (sys) {
  const answer = await sys.fetch(sys.inputs.url, { method: 'POST', body: '{"stream":true}', stream: true, timeoutMs: 120000 });
  for await (const event of answer.events()) {
    if (event.data !== '[DONE]') sys.write(JSON.parse(event.data).choices[0].delta.content);
  }
  sys.vars.calls = (sys.vars.calls ?? 0) + 1;
}`;

/** `--fan-out F`: the parent the clients call, fanning out to F children that each run agentSource (as `fetcher`). */
const fanOutChild = 'fetcher';
function fanOutAgentSource(children: number): string {
  return `export default async function (sys) {
  const answers = await Promise.all(Array.from({ length: ${children} }, () => sys.call('${fanOutChild}', { url: sys.inputs.url })));
  const failed = answers.filter((answer) => answer.resultCode !== 'success');
  if (failed.length > 0) sys.fail(failed.length + ' children failed, the first ' + failed[0].resultCode + ': ' + (failed[0].error ? failed[0].error.message : ''));
  sys.vars.calls = (sys.vars.calls ?? 0) + 1;
  sys.say(answers.length + ' answers');
}`;
}

interface IoOptions {
  /** The agent streams from the LLM-like server and the clients stream from the API. */
  stream: boolean;
  /** With `stream`: the agent's code takes each token (perTokenAgentSource) instead of relaying them. */
  perToken: boolean;
  clients: number;
  seconds: number;
  duration: number;
  /** Seconds of calls after the spread and before the timed window: the processes' warm-up (JIT, pools) left out. */
  warmup: number;
  /** WORKER_CONCURRENCY for the worker; undefined keeps the default. */
  workerConcurrency: number | undefined;
  /** Seconds of the timed window to CPU-profile in web and worker (0: none); the profiles are kept in `profileDir`. */
  profileSeconds: number;
  profileDir: string;
  /** Pieces the LLM-like server sends each answer in (tokens, in `--stream`). */
  tokens: number;
  /** With `stream`: the relay floors measured after the product, with the same clients and window (relay-floor.ts). */
  floors: boolean;
  /** Children each call's agent runs at once with sys.call (0: none, the agent awaits the server itself). */
  fanOut: number;
  /** Every client starts at the same instant on the fresh stack, timed for `duration` s (burst.ts), before the steady state. */
  burst: boolean;
}

function parseOptions(argv: string[]): IoOptions {
  const { values } = parseArgs({
    args: argv,
    options: { clients: { type: 'string' }, seconds: { type: 'string' }, duration: { type: 'string' }, warmup: { type: 'string' }, 'worker-concurrency': { type: 'string' }, stream: { type: 'boolean' }, 'per-token': { type: 'boolean' }, tokens: { type: 'string' }, profile: { type: 'string' }, 'profile-dir': { type: 'string' }, floors: { type: 'boolean' }, 'fan-out': { type: 'string' }, burst: { type: 'boolean' } },
  });
  const number = (name: string, value: string | undefined, fallback: number, { zero = false } = {}) => {
    const parsed = value === undefined ? fallback : Number(value);
    if (!(parsed > 0 || (zero && parsed === 0))) throw new Error(`--${name} must be a ${zero ? 'non-negative' : 'positive'} number`);
    return parsed;
  };
  const concurrency = values['worker-concurrency'];
  if (values['per-token'] && !values.stream) throw new Error('--per-token needs --stream');
  if (values.floors && !values.stream) throw new Error('--floors needs --stream');
  if (values['fan-out'] !== undefined && values.stream) throw new Error('--fan-out is for whole answers, not --stream');
  return {
    stream: values.stream === true,
    perToken: values['per-token'] === true,
    clients: number('clients', values.clients, 1000),
    seconds: number('seconds', values.seconds, 5),
    duration: number('duration', values.duration, 30),
    warmup: number('warmup', values.warmup, 0, { zero: true }),
    workerConcurrency: concurrency === undefined ? undefined : number('worker-concurrency', concurrency, 0),
    profileSeconds: values.profile === undefined ? 0 : number('profile', values.profile, 0),
    profileDir: values['profile-dir'] ?? '.',
    tokens: Math.round(number('tokens', values.tokens, 20)),
    floors: values.floors === true,
    fanOut: Math.round(number('fan-out', values['fan-out'], 0, { zero: true })),
    burst: values.burst === true,
  };
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const tag = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const queuePrefix = `agentexec-io-${tag}`;
  const databaseUrl = `${postgresUrl}/agentexec_io_${tag}`;
  const databaseName = `agentexec_io_${tag}`;
  const teardown = createTeardown();
  cleanUpOnInterrupt(teardown, log);
  teardown.add(`delete Redis keys ${queuePrefix}*`, async () => `${await deleteKeysWithPrefix(redisUrl, queuePrefix)} deleted`);
  teardown.add(`drop database ${databaseName}`, () => dropDatabase(databaseUrl));
  const probeDir = mkdtempSync(`${tmpdir()}/agentexec-io-`);
  // This process is the LLM-like server and every client: its own pauses are in each token's relay time too.
  process.env.LOOP_PROBE_DIR = probeDir;
  await import('./loop-probe.js');
  teardown.add('remove the loop probes', () => rmSync(probeDir, { recursive: true, force: true }));
  try {
    const agents: Record<string, string> = options.fanOut
      ? { [agentName]: fanOutAgentSource(options.fanOut), [fanOutChild]: agentSource }
      : { [agentName]: options.stream ? (options.perToken ? perTokenAgentSource : streamingAgentSource) : agentSource };
    const fixture = await createFixture(databaseUrl, agents);
    const format = options.stream ? 'chat-stream' : 'text';
    const upstream = await startLlmLikeServer({ firstByteMs: 300, totalMs: options.seconds * 1000, chunks: options.tokens, format });
    teardown.add('stop the LLM-like server', () => upstream.close());
    const processes: ProductProcess[] = [];
    teardown.add('stop web and worker', () => Promise.all(processes.map((p) => p.stop(10_000))));
    const env = {
      AGENT_HTTP_ALLOW: '127.0.0.1',
      ...(options.workerConcurrency ? { WORKER_CONCURRENCY: String(options.workerConcurrency) } : {}),
      // The clients are one account: its parents and children together pass the default 5,000 runs in flight.
      ...(options.fanOut ? { RUNS_IN_FLIGHT: '0' } : {}),
      // and the worker's memory budget lifted: the RSS peak then says what the runs need, set against the target,
      // instead of the worker pausing at its 2,048 MB default and the parents waiting for children it does not take.
      ...(options.fanOut ? { WORKER_MEMORY_MB: '16384' } : {}),
      BENCH_NODE_IMPORT: fileURLToPath(new URL('./loop-probe.js', import.meta.url)),
      LOOP_PROBE_DIR: probeDir,
      ...(options.profileSeconds ? { LOOP_PROBE_PROFILE_SECONDS: String(Math.min(options.profileSeconds, options.duration) + (options.burst ? 1 : 0)) } : {}),
    };
    const stack = await startStack({ databaseUrl, redisUrl, queuePrefix, port: await freePort(), maxAgentRuntimeMs: 120_000, env }, (p) => processes.push(p));
    const client = createClient(stack.baseUrl, { bearerKey: fixture.bearerKey, maxSockets: options.clients + 16 });
    teardown.add('close the HTTP client', () => client.close());

    const call = options.stream ? streamedCall : wholeCall;
    // What the worker holds with no run in it: a waiting run's share of the peak is counted from here.
    const workerIdleRssMb = readRssMb(stack.worker.pid);
    let burst: BurstRun | undefined;
    if (options.burst) {
      log(`burst: ${options.clients} clients at once, each making its conversation and continuing it, timed for ${options.duration} s`);
      if (options.profileSeconds) {
        // The profile (--profile) is of the burst's first seconds (the loop probe profiles at its first signal
        // only), begun a second ahead: starting the profiler stops a process for hundreds of ms.
        for (const pid of [stack.web.pid, stack.worker.pid]) process.kill(pid, 'SIGUSR2');
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      burst = await driveBurst((convid, tag) => call(client, `${upstream.url}?call=${tag}`, convid), {
        clients: options.clients,
        durationMs: options.duration * 1000,
        agentMs: options.seconds * 1000,
        pids: [stack.worker.pid, stack.web.pid],
        arrivedAt: upstream.arrivedAt,
      });
      burst.reading.firstCallPhasesMs = await firstCallPhases(databaseUrl, burst.firstCalls, options.seconds * 1000);
      log(`burst added latency p50 ${burst.reading.addedLatencyMs.p50} ms, p99 ${burst.reading.addedLatencyMs.p99} ms, max ${burst.reading.addedLatencyMs.max} ms; the steady state follows`);
    } else log(`starting ${options.clients} conversations (each one call of ${options.seconds} s)`);
    // With --fan-out the first calls are spread over T s too: 1,000 at once are 11,000 runs started in one burst,
    // which on this machine left 846 of 1,000 conversations unstarted and their runs still in the worker.
    const startSpreadMs = options.fanOut ? options.seconds * 1000 : 0;
    const firstCalls = burst
      ? []
      : await Promise.all(Array.from({ length: options.clients }, (_, i) => sleep((i * startSpreadMs) / options.clients).then(() => call(client, upstream.url))));
    const started = burst ? burst.convids.filter((c): c is string => typeof c === 'string') : firstCalls.flatMap((r) => (typeof r.convid === 'string' ? [r.convid] : []));
    const startErrors = [...new Set(firstCalls.flatMap((r) => (r.error ? [r.error] : [])))].slice(0, 5);
    if (started.length < options.clients) log(`only ${started.length} of ${options.clients} conversations started${startErrors.length ? `: ${startErrors.join('; ')}` : ''}`);

    const timing: ClientTiming = { spreadMs: options.seconds * 1000, warmupMs: options.warmup * 1000, durationMs: options.duration * 1000 };
    log(`spreading ${started.length} clients over ${options.seconds} s${timing.warmupMs ? `, running ${options.warmup} s untimed` : ''}, then timing ${options.duration} s of calls`);
    let rss: ReturnType<typeof sampleRssPeak>[] = [];
    let connections: ReturnType<typeof sampleConnections> | undefined;
    let cpuAtStart: CpuReading | undefined;
    // Read at the timed window's two ends, when as many runs are under way as at any time: their count divides evenly.
    const syscalls: { start?: (SyscallCount | null)[]; end?: (SyscallCount | null)[] } = {};
    const { completed, latencies, relayMs, firstTokenRelayMs, errors } = await driveClients(started, (convid) => call(client, upstream.url, convid), timing, {
      atStart() {
        cpuAtStart = readCpu([stack.worker.pid, stack.web.pid]);
        syscalls.start = readSyscalls([stack.worker.pid, stack.web.pid]);
        for (const pid of [stack.web.pid, stack.worker.pid, process.pid]) process.kill(pid, 'SIGUSR2');
        rss = [stack.worker, stack.web].map((p) => sampleRssPeak(p.pid, 250));
        connections = sampleConnections(databaseName);
      },
      atEnd: () => (syscalls.end = readSyscalls([stack.worker.pid, stack.web.pid])),
    });
    const used = cpuAtStart ? cpuBetween(cpuAtStart, readCpu([stack.worker.pid, stack.web.pid])) : null;
    const cpu = used ? cpuCores(used) : null;
    const [workerRss, webRss] = rss.map((s) => s.stop());
    const mostConnections = (await connections?.stop()) ?? 0;
    const probes = [stack.worker.pid, stack.web.pid, process.pid].map((pid) => readProbe(probeDir, pid));
    if (options.profileSeconds) keepProfiles(probeDir, options.profileDir, { worker: stack.worker.pid, web: stack.web.pid });
    const limit = options.clients / options.seconds;
    const runsPerSecond = completed / options.duration;
    const added = summarize(latencies.map((ms) => ms - options.seconds * 1000));
    const results = {
      at: new Date().toISOString(),
      mode: options.stream ? `streamed (agent and client), ${options.perToken ? 'the agent taking each token' : 'relayed'}` : options.fanOut ? `whole answers, each call a parent of ${options.fanOut} children` : 'whole answers',
      clients: options.clients,
      ...(started.length < options.clients ? { clientsStarted: started.length, startErrors } : {}),
      workerConcurrency: options.workerConcurrency ?? 'default',
      upstreamSeconds: options.seconds,
      upstreamPieces: options.tokens,
      warmupSeconds: options.warmup,
      durationSeconds: options.duration,
      runsPerSecond: round(runsPerSecond),
      limitRunsPerSecond: round(limit),
      ofLimit: round(runsPerSecond / limit),
      addedLatencyMs: { p50: round(added.p50), p99: round(added.p99), max: round(added.max) },
      ...(options.stream
        ? {
            tokenRelayMs: { tokens: relayMs.length, ...relayFigures(relayMs) },
            firstTokenRelayMs: { answers: firstTokenRelayMs.length, ...relayFigures(firstTokenRelayMs) },
          }
        : {}),
      cpuCores: cpu,
      cpuWaitMsPerSecond: used ? cpuWaits(used) : null,
      syscallsPerRun: perRun(syscalls, runsPerSecond * options.duration),
      mostPostgresConnections: mostConnections,
      rssPeakMb: { worker: round(workerRss!), web: round(webRss!) },
      ...(options.fanOut ? { fanOut: fanOutFigures({ clients: started.length, fanOut: options.fanOut }, { ofLimit: runsPerSecond / limit, mostConnections, workerIdleRssMb, workerRssPeakMb: workerRss!, workerMemory: probes[0]?.memory ?? null }) } : {}),
      eventLoopDelayMs: { worker: probes[0]?.loop ?? null, web: probes[1]?.loop ?? null, bench: probes[2]?.loop ?? null },
      gcPausesMs: { worker: probes[0]?.gc ?? null, web: probes[1]?.gc ?? null, bench: probes[2]?.gc ?? null },
      errors: errors.length,
      firstErrors: [...new Set(errors)].slice(0, 5),
      firstWarnings: processes.flatMap((p) => p.problems().map((line) => `${p.name}: ${line}`)).slice(0, 5),
    };
    if (burst) {
      const targets = burstTargets(burst.reading, { addedP99: added.p99, ofLimit: runsPerSecond / limit }, options.seconds);
      Object.assign(results, { burst: { ...burst.reading, toSteadyAddedP99: round2(burst.reading.addedLatencyMs.p99 / added.p99) }, targets });
      for (const line of targetLines(targets)) log(line);
    }
    const floors = options.floors ? await measureFloors(options, { upstream: upstream.url, prefix: queuePrefix, timing }, processes) : undefined;
    if (floors) {
      const relayToFloor = relayRatios(results.tokenRelayMs!, floors);
      Object.assign(results, { floors, relayToFloor });
      for (const [kind, { p50, p99, target }] of Object.entries(relayToFloor)) {
        log(`token relay ÷ ${kind} floor: p50 ${p50} ×, p99 ${p99} ×${target ? ` (target ≤ ${target} ×): ${p50 <= target && p99 <= target ? 'met' : 'NOT met'}` : ''}`);
      }
    }
    printResults(results);
    const resultsFile = options.stream ? 'io-stream-results.json' : options.fanOut ? 'io-fanout-results.json' : 'io-results.json';
    writeFileSync(new URL(`../../../bench/${burst ? resultsFile.replace('results', 'burst-results') : resultsFile}`, import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
    return errors.length === 0 && !burst?.reading.errors ? 0 : 1;
  } finally {
    for (const line of await teardown.run()) log(line);
  }
}

/** Issue 51's targets for 1,000 parents of 10 children on one worker (DESIGN §11, §19). */
const fanOutTargets = { ofLimit: 0.9, mostPostgresConnections: 20, workerRssPeakMb: 2048 };

/**
 * `--fan-out`: the worker's RSS per waiting run (its peak over what it held idle, shared by the
 * C × (F + 1) runs a full window holds), and the three figures beside their targets.
 */
function fanOutFigures(
  /** `clients`: those whose conversation started (they hold the runs). */
  options: { clients: number; fanOut: number },
  measured: { ofLimit: number; mostConnections: number; workerIdleRssMb: number; workerRssPeakMb: number; workerMemory: ProbeReading['memory'] },
) {
  const waitingRunsAtPeak = options.clients * (options.fanOut + 1);
  const figure = (value: number, target: number, atLeast: boolean) => ({ value: round2(value), target: `${atLeast ? '>=' : '<='} ${target}`, met: atLeast ? value >= target : value <= target });
  return {
    children: options.fanOut,
    waitingRunsAtPeak,
    workerIdleRssMb: round(measured.workerIdleRssMb),
    workerRssPerWaitingRunKb: Math.round(((measured.workerRssPeakMb - measured.workerIdleRssMb) * 1024) / waitingRunsAtPeak),
    // The worker's own heap (host-side state: sessions, journals, jobs, sockets) at its RSS peak; the rest is mostly the isolates.
    workerHeapAtPeakMb: measured.workerMemory,
    targets: {
      ofLimit: figure(measured.ofLimit, fanOutTargets.ofLimit, true),
      mostPostgresConnections: figure(measured.mostConnections, fanOutTargets.mostPostgresConnections, false),
      workerRssPeakMb: figure(measured.workerRssPeakMb, fanOutTargets.workerRssPeakMb, false),
    },
  };
}

/**
 * `--floors`: with web and worker stopped, each relay floor in turn, with as many clients over the same
 * spread, warm-up and window as the product had.
 */
async function measureFloors(
  options: IoOptions,
  settings: { upstream: string; prefix: string; timing: ClientTiming },
  productProcesses: ProductProcess[],
): Promise<Partial<Record<RelayFloorKind, RelayFloorReading>>> {
  await Promise.all(productProcesses.map((p) => p.stop(10_000)));
  const floors: Partial<Record<RelayFloorKind, RelayFloorReading>> = {};
  for (const kind of relayFloorKinds) {
    log(`relay floor ${kind}: ${options.clients} clients, the same spread, warm-up and window`);
    // A floor that cannot be measured is left out, named in the log: the product's figures stand without it.
    floors[kind] = await measureRelayFloor(kind, { ...settings, redisUrl, clients: options.clients }).catch((err: unknown) => {
      log(`relay floor ${kind} could not be measured: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    });
  }
  return floors;
}

/** What the token relay's p50 and p99 may be at most, each over the `pubsub` floor's (issue 49: streams at 1,000 clients). */
const relayToFloorTarget = 2;

/**
 * The product's token relay over each floor's (p50 and p99): how much its hops and work add to what this
 * machine does. Over the `pubsub` floor (the product's hops) beside the target both must meet; the
 * `direct` floor has fewer hops than any queued design, and no target.
 */
function relayRatios(product: { p50: number; p99: number }, floors: Partial<Record<RelayFloorKind, RelayFloorReading>>): Record<string, { p50: number; p99: number; target?: number }> {
  return Object.fromEntries(
    Object.entries(floors).flatMap(([kind, floor]) =>
      floor
        ? [[kind, { p50: round2(product.p50 / floor.tokenRelayMs.p50), p99: round2(product.p99 / floor.tokenRelayMs.p99), ...(kind === 'pubsub' ? { target: relayToFloorTarget } : {}) }]]
        : [],
    ),
  );
}

/** Cores used on average over a window (cpuBetween of readings of [worker, web]): where the machine's time went. */
function cpuCores(used: CpuReading): Record<'worker' | 'web' | 'bench' | 'machine', number> {
  return { worker: coresOver(used, used.processMs[0]!), web: coresOver(used, used.processMs[1]!), bench: coresOver(used, used.ownMs), machine: coresOver(used, used.machineMs) };
}

/**
 * For each process, ms per second of the window that its main thread (its event loop) was ready to run
 * but waited for a core, which no process's own code accounts for (null where the kernel keeps no schedstat).
 */
function cpuWaits(used: CpuReading): Record<'worker' | 'web' | 'bench', number | null> {
  const perSecond = (ms: number | null | undefined) => (ms == null ? null : Math.round((ms / used.at) * 1000));
  const [worker, web, bench] = used.waitingMs;
  return { worker: perSecond(worker), web: perSecond(web), bench: perSecond(bench) };
}

/** Polls pg_stat_activity for the connections to the bench's database; `stop` gives the most seen at once. */
function sampleConnections(databaseName: string): { stop(): Promise<number> } {
  const admin = new pg.Client({ connectionString: `${postgresUrl}/postgres` });
  let most = 0;
  let timer: NodeJS.Timeout | undefined;
  const ready = admin.connect().then(() => {
    const sample = async () => {
      const { rows } = await admin.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where datname = $1', [databaseName]);
      most = Math.max(most, rows[0]?.n ?? 0);
      timer = setTimeout(() => void sample().catch(() => undefined), 200);
    };
    return sample();
  });
  return {
    async stop() {
      await ready;
      clearTimeout(timer);
      await admin.end();
      return most;
    },
  };
}

/** Copies the CPU profiles the loop probes wrote as `<name>.cpuprofile` into `toDir`. */
function keepProfiles(probeDir: string, toDir: string, pids: Record<string, number>): void {
  // Made if missing: a run of minutes must not end in ENOENT after its measurements, losing them.
  mkdirSync(toDir, { recursive: true });
  for (const [name, pid] of Object.entries(pids)) {
    const from = `${probeDir}/${pid}.cpuprofile`;
    if (existsSync(from)) copyFileSync(from, `${toDir}/${name}.cpuprofile`);
    else log(`no CPU profile from the ${name} process`);
  }
}

interface ProbeReading {
  loop: { p99: number; max: number };
  gc: { pauses: number; total: number; max: number };
  /** process.memoryUsage (MB) when the process's RSS was highest in the timed window. */
  memory: { rssMb: number; heapUsedMb: number; heapTotalMb: number; externalMb: number } | null;
}

/** What loop-probe.ts last wrote for the process: its event-loop delay and its GC pauses over the timed window. */
function readProbe(dir: string, pid: number): ProbeReading | null {
  try {
    const probe = JSON.parse(readFileSync(`${dir}/${pid}.json`, 'utf8')) as { p99: number; max: number; gc: { pauses: number; totalMs: number; maxMs: number }; memory?: ProbeReading['memory'] };
    return {
      memory: probe.memory ?? null,
      loop: { p99: round(probe.p99), max: round(probe.max) },
      gc: { pauses: probe.gc.pauses, total: round(probe.gc.totalMs), max: round(probe.gc.maxMs) },
    };
  } catch {
    return null;
  }
}

/** The system calls web and worker made in the timed window, per run made in it. */
function perRun(syscalls: { start?: (SyscallCount | null)[]; end?: (SyscallCount | null)[] }, runs: number): Record<'worker' | 'web', SyscallCount | null> | null {
  const { start, end } = syscalls;
  if (!start || !end) return null;
  return { worker: syscallsPer(start[0] ?? null, end[0] ?? null, runs), web: syscallsPer(start[1] ?? null, end[1] ?? null, runs) };
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

function printResults(r: Record<string, unknown>): void {
  console.log(JSON.stringify(r, null, 2));
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(1);
  },
);
