/**
 * What crosses between the host and the sandbox's bootstrap (bootstrap/, evaluated once in every
 * context). Both sides import it, the isolate's realm included, so it imports nothing and holds
 * constants and the JSON shapes that cross the boundary only.
 */

/** File name of the bootstrap inside the isolate (stack traces). */
export const bootstrapFileName = 'agentexec-sandbox.js';

/** Host calls (sleep, fetch, ask) one run may have pending at once (DESIGN §12). */
export const maxPendingCalls = 1000;

/**
 * What one run's `sys` is built from (SandboxRun's fields of the same names); passed into the isolate
 * as one JSON string per run. The isolate hands the values to the agent as they are.
 */
export interface RunConfig {
  agentName: string;
  convid: string;
  inputs: { [key: string]: unknown };
  caller: { kind: string; id: string; role: string };
  vars: { [key: string]: unknown };
  conv: { [key: string]: unknown };
  /** Seeds Math.random so a replay draws the same numbers. */
  randomSeed: number;
  /** Every sys call carries the site it was made from, and sys.vars / sys.conv report their changes. */
  trace: boolean;
  /** sys.secrets (DESIGN §13). */
  secrets: { [key: string]: string };
}

/**
 * What the isolate reports of a run once its code is over (the JSON `start` resolves to): the agent
 * returned or threw; sandbox-endings.ts makes the run's ending of it. `reusable`: nothing of the run
 * is left pending, so no code of it can run again once the isolate has answered; however it ended,
 * its context is then as clean as before it.
 */
export type IsolateReport = ({ kind: 'returned'; vars: string; conv: string } | { kind: 'threw'; thrown: ThrownDescription }) & {
  reusable: boolean;
  /** Output the run queued and no host call carried (JSON, "" when none): made before the result is read. */
  outbox: string;
};

/**
 * What the agent threw, as described inside the isolate (bootstrap/describe.ts) or from the copy
 * isolated-vm hands the host. `fetch`: a sys.fetch failure; `builtin`: TypeError, ReferenceError, …;
 * `agent`: a mistake the sandbox detected (no default export, non-JSON vars, import());
 * `other`: anything else the agent threw.
 */
export interface ThrownDescription {
  kind: 'fetch' | 'builtin' | 'agent' | 'other';
  name: string;
  message: string;
  stack: string;
}

/**
 * What the bootstrap closure returns: starts one run from its RunConfig JSON and resolves to its
 * IsolateReport JSON (called with `apply`, on a thread of isolated-vm's pool). A run entered synchronously
 * (`applySync`, on the host's own thread: agent-context.ts) takes three calls instead: `begin` starts
 * it; `settled`, once the isolate's microtasks have drained, tells whether it is over (its IsolateReport
 * JSON, and whether it left async host calls pending) or still waiting on the host; `finish` resolves
 * to the IsolateReport JSON of one still waiting. `reply` answers an async host call instead: its number
 * in place of the token, the reply JSON in place of the config (bootstrap/host.ts `callAsync`).
 */
export type StartRun = (token: number, config: string, step?: 'begin' | 'settled' | 'finish' | 'reply') => Promise<string> | '' | SettledRun | undefined;

/** `text`: the IsolateReport JSON of a run that is over, "" for one still waiting; `leftover`: async host calls it left pending. */
export interface SettledRun {
  text: string;
  leftover: boolean;
}
