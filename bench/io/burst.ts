import pg from 'pg';
import { coresOver, cpuBetween, readCpu } from '../cpu.js';
import { summarize } from '../stats.js';
import type { CallResult } from './calls.js';

/**
 * bench:io `--burst`: waiting runs arriving at once, as a deploy, a reconnect storm or a marketing email
 * brings them. Every client starts at the same instant on a freshly started stack, with no warm-up:
 * its first call makes its conversation, then it continues it call after call for the burst's
 * duration; every call begun in it is timed, from its first, to its end. The clients move in one wave
 * (each calls again as soon as it is answered), so the later calls are bunched too: the whole run is
 * the burst. The steady state the same run then measures (main.ts) divides it.
 */

export interface BurstReading {
  clients: number;
  durationSeconds: number;
  calls: number;
  /** Each call's time minus the agent's own T, ms, over every call of the burst. */
  addedLatencyMs: { p50: number; p99: number; max: number };
  /** The same for the clients' first calls alone (the new conversations, all at the same instant). */
  firstCallAddedMs: { p50: number; p99: number; max: number };
  /**
   * Where the first calls' time went, from their execution records (ms, p50 and p99 of each): the client's
   * call to the web process's receipt (`toSubmitted`), receipt to the run's start in a process
   * (`queued`), start to commit less T (`runningOverT`), commit to the client's answer (`answered`).
   */
  firstCallPhasesMs?: Record<'toSubmitted' | 'queued' | 'runningOverT' | 'answered', { p50: number; p99: number }>;
  /**
   * Every call of the burst split where the LLM-like server saw it (ms, p50 and p99 of each): from the
   * client's call to the agent's request arriving (`toUpstream`: the call's way in, its queueing, its
   * run's start), and from the server's answer's end (arrival + T) to the client's (`fromUpstream`:
   * the relay, the run's end, its commit, the answer's way out).
   */
  upstreamSplitMs: Record<'toUpstream' | 'fromUpstream', { p50: number; p99: number; max: number }>;
  /** Cores used during the burst: worker, web, this process, the whole machine. */
  cpuCores: Record<'worker' | 'web' | 'bench' | 'machine', number>;
  errors: number;
  firstErrors: string[];
}

export interface BurstRun {
  reading: BurstReading;
  /** The conversation each client made (those that made one), for the steady state after. */
  convids: string[];
  /** Each first call's conversation and its begin and end (epoch ms), for `firstCallPhases`. */
  firstCalls: FirstCall[];
}

interface FirstCall {
  convid: string;
  begunAt: number;
  endedAt: number;
}

/**
 * `clients` clients at once, each making its conversation with `call()` and continuing it with
 * `call(convid)` until `durationMs` from the start; `atStart` is called as they start. `pids` are
 * worker's and web's, for their cores.
 */
export async function driveBurst(
  call: (convid: string | undefined, tag: string) => Promise<CallResult>,
  settings: { clients: number; durationMs: number; agentMs: number; pids: [worker: number, web: number]; arrivedAt: (tag: string) => number | undefined },
  atStart?: () => void,
): Promise<BurstRun> {
  const toUpstream: number[] = [];
  const fromUpstream: number[] = [];
  let calls = 0;
  const added: number[] = [];
  const firstAdded: number[] = [];
  const errors: string[] = [];
  const convids: string[] = [];
  const firstCalls: FirstCall[] = [];
  atStart?.();
  const cpuAtStart = readCpu(settings.pids);
  const start = performance.now();
  const end = start + settings.durationMs;
  await Promise.all(
    Array.from({ length: settings.clients }, async () => {
      let convid: string | undefined;
      do {
        const begun = performance.now();
        const begunAt = Date.now();
        const tag = String((calls += 1));
        const result = await call(convid, tag);
        const ended = performance.now();
        const ms = ended - begun - settings.agentMs;
        const arrived = settings.arrivedAt(tag);
        if (arrived !== undefined && !result.error) {
          toUpstream.push(arrived - begun);
          fromUpstream.push(ended - arrived - settings.agentMs);
        }
        if (result.error) {
          errors.push(result.error);
          // Without its conversation the client cannot continue; a failed later call is counted and retried.
          if (!convid) return;
          continue;
        }
        added.push(ms);
        if (!convid) {
          firstAdded.push(ms);
          convid = result.convid;
          if (!convid) return;
          convids.push(convid);
          firstCalls.push({ convid, begunAt, endedAt: Date.now() });
        }
      } while (performance.now() < end);
    }),
  );
  const used = cpuBetween(cpuAtStart, readCpu(settings.pids));
  return {
    convids,
    firstCalls,
    reading: {
      clients: settings.clients,
      durationSeconds: settings.durationMs / 1000,
      calls: added.length,
      addedLatencyMs: figures(added),
      firstCallAddedMs: figures(firstAdded),
      upstreamSplitMs: { toUpstream: figures(toUpstream), fromUpstream: figures(fromUpstream) },
      cpuCores: { worker: coresOver(used, used.processMs[0]!), web: coresOver(used, used.processMs[1]!), bench: coresOver(used, used.ownMs), machine: coresOver(used, used.machineMs) },
      errors: errors.length,
      firstErrors: [...new Set(errors)].slice(0, 5),
    },
  };
}

/**
 * Splits the first calls' time by their execution records (the earliest of each conversation); both
 * clocks are this machine's, to the ms.
 */
export async function firstCallPhases(databaseUrl: string, firstCalls: FirstCall[], agentMs: number): Promise<BurstReading['firstCallPhasesMs']> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ convid: string; submitted: string; started: string; finished: string }>(
      `select distinct on (convid) convid, extract(epoch from submitted_at) * 1000 as submitted, extract(epoch from started_at) * 1000 as started,
         extract(epoch from finished_at) * 1000 as finished from executions where convid = any($1) order by convid, submitted_at`,
      [firstCalls.map((c) => c.convid)],
    );
    const byConvid = new Map(rows.map((row) => [row.convid, row]));
    const phases = { toSubmitted: [] as number[], queued: [] as number[], runningOverT: [] as number[], answered: [] as number[] };
    for (const call of firstCalls) {
      const row = byConvid.get(call.convid);
      if (!row) continue;
      const [submitted, started, finished] = [Number(row.submitted), Number(row.started), Number(row.finished)];
      phases.toSubmitted.push(submitted - call.begunAt);
      phases.queued.push(started - submitted);
      phases.runningOverT.push(finished - started - agentMs);
      phases.answered.push(call.endedAt - finished);
    }
    const two = (ms: number[]) => {
      const { p50, p99 } = summarize(ms);
      return { p50: round(p50), p99: round(p99) };
    };
    return { toSubmitted: two(phases.toSubmitted), queued: two(phases.queued), runningOverT: two(phases.runningOverT), answered: two(phases.answered) };
  } finally {
    await db.end();
  }
}

/** A target of the burst, beside the figure it judges. */
export interface BurstTarget {
  what: string;
  figure: number;
  target: number;
  /** `<=`: the figure must not exceed the target; `>=`: it must reach it. */
  sense: '<=' | '>=';
  met: boolean;
}

/**
 * The targets of issue 49's burst: the added p99 of 200 clients of a 2 s agent at most 350 ms (what
 * another durable-execution engine adds on this machine); otherwise at most 3 × the steady state's
 * added p99 of the same run; and the steady state still at least 0.95 × the limit C / T.
 */
export function burstTargets(burst: BurstReading, steady: { addedP99: number; ofLimit: number }, agentSeconds: number): BurstTarget[] {
  const target = (what: string, figure: number, sense: '<=' | '>=', bound: number): BurstTarget => ({
    what,
    figure: round(figure),
    target: round(bound),
    sense,
    met: sense === '<=' ? figure <= bound : figure >= bound,
  });
  const p99 = burst.addedLatencyMs.p99;
  const absolute = burst.clients === 200 && agentSeconds === 2;
  return [
    absolute
      ? target('burst added p99, ms (C = 200, T = 2 s)', p99, '<=', 350)
      : target("burst added p99 ÷ the steady state's added p99", p99 / steady.addedP99, '<=', 3),
    target('steady-state runs/s ÷ the limit C / T', steady.ofLimit, '>=', 0.95),
  ];
}

/** The targets as lines, each figure beside its target. */
export function targetLines(targets: BurstTarget[]): string[] {
  return targets.map((t) => `${t.met ? 'met    ' : 'MISSED '} ${t.what}: ${t.figure} (target ${t.sense} ${t.target})`);
}

function figures(ms: number[]): { p50: number; p99: number; max: number } {
  const { p50, p99, max } = summarize(ms);
  return { p50: round(p50), p99: round(p99), max: round(max) };
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
