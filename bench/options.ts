/** How much work each measurement does: the full profile, or a smaller one for a smoke run. */
export interface Profile {
  name: 'full' | 'quick';
  /**
   * Hello calls, 64 in flight, made once the stack is up and before anything is measured: a fresh web
   * process answers its first few thousand calls ~1.5 × slower while V8 compiles its hot paths, and the
   * targets are about a running service. `--cold` skips them.
   */
  stackWarmupCalls: number;
  /** Calls each scenario makes untimed before its timed ones. */
  warmupCalls: number;
  sequentialCalls: number;
  concurrentCalls: number;
  concurrency: number;
  floorSequentialCalls: number;
  floorConcurrentCalls: number;
  clientCostCalls: number;
  oneConversationCalls: number;
  askCycles: number;
  streamCalls: number;
  cancelCycles: number;
  openStreams: number;
}

export interface Options {
  profile: Profile;
  /** Exit 1 when a target is missed or a measurement failed (for CI); otherwise only a broken harness does. */
  strict: boolean;
  /** Scenario ids to run (the floor is always measured); undefined runs them all. */
  only?: string[];
  /** Rounds of floor and scenarios against one stack, reported as medians (bench/rounds.ts); 1 unless told. */
  rounds: number;
  /** `--cold`: measure the stack as started, without its warm-up calls (Profile.stackWarmupCalls). */
  cold: boolean;
}

const full: Profile = {
  name: 'full',
  stackWarmupCalls: 5000,
  warmupCalls: 200,
  sequentialCalls: 1000,
  concurrentCalls: 5000,
  concurrency: 64,
  floorSequentialCalls: 1000,
  floorConcurrentCalls: 5000,
  clientCostCalls: 3000,
  oneConversationCalls: 2000,
  askCycles: 200,
  streamCalls: 10,
  cancelCycles: 50,
  openStreams: 500,
};

const quick: Profile = {
  name: 'quick',
  stackWarmupCalls: 1000,
  warmupCalls: 50,
  sequentialCalls: 200,
  concurrentCalls: 1000,
  concurrency: 64,
  floorSequentialCalls: 200,
  floorConcurrentCalls: 1000,
  clientCostCalls: 500,
  oneConversationCalls: 300,
  askCycles: 30,
  streamCalls: 3,
  cancelCycles: 10,
  openStreams: 100,
};

const usage = 'usage: node --no-node-snapshot dist/bench/main.js [--quick] [--strict] [--only SCENARIO,...] [--rounds N] [--cold]';

/** Reads the command line (`--quick`, `--strict`, `--only ids`, `--rounds N`, `--cold`); an unknown flag or a bad count stops with the usage line. */
export function parseOptions(argv: string[]): Options {
  const options: Options = { profile: full, strict: false, rounds: 1, cold: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--quick') options.profile = quick;
    else if (arg === '--strict') options.strict = true;
    else if (arg === '--only' && argv[i + 1]) options.only = argv[++i]!.split(',');
    else if (arg === '--rounds' && argv[i + 1]) options.rounds = roundCount(argv[++i]!);
    else if (arg === '--cold') options.cold = true;
    else throw new Error(`unknown option ${arg}\n${usage}`);
  }
  return options;
}

function roundCount(text: string): number {
  const count = Number(text);
  if (!Number.isInteger(count) || count < 1 || count > 9) throw new Error(`--rounds takes a whole number from 1 to 9, not ${text}\n${usage}`);
  return count;
}
