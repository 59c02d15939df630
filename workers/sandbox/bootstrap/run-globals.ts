import { traced } from './call-site.js';
import { formatLine } from './describe.js';
import { callSync, type Run } from './host.js';
import { RealDate } from './intrinsics.js';

/**
 * The globals that answer for the run in progress, installed before the lockdown: the seeded
 * Math.random, the journaled Date, and console. They are the context's, shared by the runs in it,
 * so they read the current run (the one whose code the isolate runs now, main.ts) when called.
 */

/** The run in progress; Date and console speak for it. */
export type CurrentRun = () => Run;

/**
 * Math.random: mulberry32 with a state of each run's own (Run `seed`, seeded from its RunConfig), so a
 * replay draws the same numbers whatever the other runs in the context draw meanwhile.
 */
export function installSeededRandom(currentRun: CurrentRun): void {
  // An arrow, as a built-in: no `prototype` object for the lockdown to make and freeze in every context.
  const random = (): number => {
    const run = currentRun();
    const seed = (run.seed = (run.seed + 0x6d2b79f5) >>> 0);
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  Object.defineProperty(Math, 'random', { value: random, writable: true, configurable: true });
}

/** Date.now(), new Date() and Date() read the journaled clock; other forms are pure. */
export function installJournaledDate(currentRun: CurrentRun): void {
  function clock(): number {
    const run = currentRun();
    return callSync(run, 'now', traced(run, {})) as number;
  }
  function JournaledDate(...args: unknown[]): unknown {
    if (new.target === undefined) return new RealDate(clock()).toString();
    return Reflect.construct(RealDate, args.length === 0 ? [clock()] : args, new.target);
  }
  JournaledDate.prototype = RealDate.prototype;
  // An arrow (named `now` as the built-in is): no `prototype` object for the lockdown to make and freeze.
  const now = (): number => clock();
  JournaledDate.now = now;
  JournaledDate.parse = RealDate.parse;
  JournaledDate.UTC = RealDate.UTC;
  Object.defineProperty(RealDate.prototype, 'constructor', { value: JournaledDate, writable: true, configurable: true });
  Object.defineProperty(globalThis, 'Date', { value: JournaledDate, writable: true, configurable: true });
}

/** console exists in a bare V8 context but prints nowhere; make it an alias of sys.log. */
export function installConsole(currentRun: CurrentRun): void {
  const consoleLog = (...args: unknown[]): void => {
    const run = currentRun();
    callSync(run, 'log', traced(run, { line: formatLine(args) }));
  };
  const agentConsole = { log: consoleLog, info: consoleLog, warn: consoleLog, error: consoleLog, debug: consoleLog };
  Object.defineProperty(globalThis, 'console', { value: agentConsole, writable: true, configurable: true });
}
