import { readFileSync } from 'node:fs';

/** CPU time spent by processes (user + system), to tell where the cores go during a load. */

/** /proc times are in USER_HZ ticks, which Linux fixes at 100 per second for user space. */
const msPerTick = 10;

/** CPU time a process has used so far, in ms (fields 14 and 15 of /proc/<pid>/stat). */
function readCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * msPerTick;
}

/** Busy CPU time of the whole machine so far, in ms: every state of /proc/stat but idle and iowait. */
function readMachineBusyMs(): number {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = ticks;
  return (user + nice + system + irq + softirq + steal) * msPerTick;
}

/**
 * How long the process's main thread (its event loop) has so far been ready to run but waited for a
 * core, in ms (field 2 of /proc/<pid>/schedstat); null where the kernel does not keep it.
 */
function readWaitingMs(pid: number): number | null {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e6;
  } catch {
    return null;
  }
}

/** CPU time used so far by some processes, this one and the whole machine (`readCpu`). */
export interface CpuReading {
  /** performance.now() when read. */
  at: number;
  /** ms of CPU used so far by each of the given processes, in order. */
  processMs: number[];
  /** ms used so far by this process. */
  ownMs: number;
  /** ms the whole machine has been busy so far (Postgres, Redis and anything else running included). */
  machineMs: number;
  /** ms each given process's main thread has waited for a core so far, in order (null: not kept), then this process's. */
  waitingMs: (number | null)[];
}

export function readCpu(pids: number[]): CpuReading {
  const own = process.cpuUsage();
  return { at: performance.now(), processMs: pids.map(readCpuMs), ownMs: (own.user + own.system) / 1000, machineMs: readMachineBusyMs(), waitingMs: [...pids, process.pid].map(readWaitingMs) };
}

/** What was used between two readings of the same processes: `at` is the window's length in ms. */
export function cpuBetween(from: CpuReading, to: CpuReading): CpuReading {
  return {
    at: to.at - from.at,
    processMs: to.processMs.map((ms, i) => ms - from.processMs[i]!),
    ownMs: to.ownMs - from.ownMs,
    machineMs: to.machineMs - from.machineMs,
    waitingMs: to.waitingMs.map((ms, i) => (ms == null || from.waitingMs[i] == null ? null : ms - from.waitingMs[i]!)),
  };
}

/** `ms` of CPU used over the window of `used` (cpuBetween) as cores on average, to two decimals. */
export function coresOver(used: CpuReading, ms: number): number {
  return Math.round((ms / used.at) * 100) / 100;
}

export interface CpuCost<T> {
  result: T;
  /** ms of CPU used during `work` by each of the given processes, in order. */
  processMs: number[];
  /** ms used by this process. */
  ownMs: number;
  /** ms the whole machine was busy (Postgres, Redis and anything else running included). */
  machineMs: number;
}

/** Runs `work` and measures the CPU the given processes, this one and the machine used meanwhile. */
export async function withCpuCost<T>(pids: number[], work: () => Promise<T>): Promise<CpuCost<T>> {
  const before = readCpu(pids);
  const result = await work();
  const { processMs, ownMs, machineMs } = cpuBetween(before, readCpu(pids));
  return { result, processMs, ownMs, machineMs };
}
