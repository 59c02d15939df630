import type { RunConfig, StartRun, ThrownDescription } from '../sandbox-protocol.js';
import { describeThrown } from './describe.js';
import { noticeReturned, settleCall, takeOutbox, type Host, type Run } from './host.js';
import { apply, parseJson, regExpExec, toJson } from './intrinsics.js';
import { lockDown, sealStackTraceHook } from './lockdown.js';
import { installConsole, installJournaledDate, installSeededRandom } from './run-globals.js';
import { jsonText, makeSys } from './sys.js';

/**
 * The sandbox's bootstrap, run once per context before any run (agent-context.ts evaluates the
 * bundle with `evalClosure`, which calls this with `$0`, `$1`, `$2`: the host's sync and async call
 * references and the agent's module factory). It installs the seeded Math.random, the journaled Date
 * and console, then locks the realm down, and returns the function that starts one run. Each run
 * builds a fresh `sys` and a fresh agent module, so one context serves many runs of one agent (and one
 * caller), several at once while they wait on the host: the realm is frozen, so nothing one run does
 * reaches another but through the host. Every entry into the context names the run whose code it runs
 * (a start, or the reply to one of its calls), and the globals that answer for a run (Date, console,
 * Math.random) answer for that one. The host references live only in this closure, never on a global,
 * and everything crossing the boundary is a JSON string.
 */

/** The agent's compiled module, run afresh (agent-context.ts `wrapAsFactory`). */
type AgentModuleFactory = () => { default?: unknown } | null | undefined;

type AgentReturn = { kind: 'returned'; vars: string; conv: string } | { kind: 'threw'; thrown: ThrownDescription };

const noDefaultExport: ThrownDescription = {
  kind: 'agent',
  name: '',
  message: 'the agent module has no default export function (export default async function (sys) {...})',
  stack: '',
};

const emptyPattern = /(?:)/;

export function bootstrap(hostSync: Host['sync'], hostAsync: Host['async'], loadAgentModule: AgentModuleFactory): StartRun {
  const host: Host = { sync: hostSync, async: hostAsync };
  let current: Run = { host, token: 0, pending: 0, seed: 0, trace: false, outbox: [], outboxSize: 0 };
  const currentRun = () => current;
  const enterRun = (run: Run) => void (current = run);
  sealStackTraceHook();
  installSeededRandom(currentRun);
  installJournaledDate(currentRun);
  installConsole(currentRun);
  lockDown();

  // The run entered synchronously last (StartRun `begin`), and its result once it has one; `asked`:
  // the host asked whether it settled within its entry (and awaits `finish` when it had not).
  let begun: { token: number; run: Run | undefined; ending: Promise<string>; text: string; asked: boolean } | undefined;
  // A run entered the usual way, or one entered synchronously that outlasted its entry, is over for the
  // host when its result comes, after the microtasks drained: the host is told the agent returned.
  const hostAwaitsDrain = (token: number) => begun === undefined || begun.token !== token || begun.asked;
  const startRun = async (token: number, configText: string, made?: (run: Run) => void): Promise<string> => {
    const config = parseJson(configText) as RunConfig;
    const run: Run = { host, token, pending: 0, seed: config.randomSeed >>> 0, trace: config.trace === true, outbox: [], outboxSize: 0 };
    made?.(run);
    current = run;
    // RegExp.$1 and friends are context-wide; clear what the previous run matched.
    apply(regExpExec, emptyPattern, ['']);
    let ending: AgentReturn;
    try {
      ending = await runAgent(loadAgentModule, makeSys(run, config));
    } catch (err) {
      const thrown = describeThrown(err);
      if (hostAwaitsDrain(token)) noticeReturned(run);
      return toJson({ kind: 'threw', thrown, reusable: run.pending === 0, outbox: takeOutbox(run) });
    }
    if (hostAwaitsDrain(token)) noticeReturned(run);
    // Code the run left queued may still call the host before the host has this result; the host
    // counts those calls itself (agent-context.ts). The output still queued comes with the result.
    const outbox = takeOutbox(run);
    return toJson({ ...ending, reusable: run.pending === 0, outbox });
  };
  return function enter(token, configText, how) {
    if (how === 'reply') {
      settleCall(token, configText, enterRun);
      return undefined;
    }
    if (how === 'settled' || how === 'finish') {
      const mine = begun !== undefined && begun.token === token ? begun : undefined;
      if (mine !== undefined) mine.asked = true;
      if (how === 'settled') return { text: mine === undefined ? '' : mine.text, leftover: mine?.run !== undefined && mine.run.pending > 0 };
      return mine === undefined ? Promise.resolve('') : mine.ending;
    }
    // One call site for both ways in, so an error's stack reads the same either way.
    let run: Run | undefined;
    const ending = startRun(token, configText, (made) => (run = made));
    if (how === undefined) return ending;
    // startRun made its run before its first await (unless its config did not parse: it rejects then).
    const mine = { token, run, ending, text: '', asked: false };
    begun = mine;
    void ending.then((text) => void (mine.text = text));
    return '';
  };
}

// A fresh agent module per run: its top-level state starts over like in a fresh isolate.
async function runAgent(loadAgentModule: AgentModuleFactory, sys: { vars: unknown; conv: unknown }): Promise<AgentReturn> {
  const agentModule = loadAgentModule();
  const main = agentModule === null || agentModule === undefined ? undefined : agentModule.default;
  if (typeof main !== 'function') return { kind: 'threw', thrown: noDefaultExport };
  await main(sys);
  return { kind: 'returned', vars: jsonText(sys.vars, 'sys.vars'), conv: jsonText(sys.conv, 'sys.conv') };
}
