import { readFileSync } from 'node:fs';

/** Resident memory of a process, in MB (VmRSS of /proc/<pid>/status). */
export function readRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) / 1024;
}

export interface RssSampler {
  /** Stops sampling; the highest RSS seen, in MB. */
  stop(): number;
}

/** Samples a process's RSS every `intervalMs` (and once at start and stop), keeping the peak. */
export function sampleRssPeak(pid: number, intervalMs = 100): RssSampler {
  let peak = readRssMb(pid);
  const sample = () => {
    try {
      peak = Math.max(peak, readRssMb(pid));
    } catch {
      // The process is gone; the peak so far stands and the scenario's own calls will fail.
    }
  };
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

/** Runs `work` while sampling the RSS of each process; the peaks are in the order of `pids`. */
export async function withRssPeaks<T>(pids: number[], work: () => Promise<T>): Promise<{ result: T; peaksMb: number[] }> {
  const samplers = pids.map((pid) => sampleRssPeak(pid));
  try {
    const result = await work();
    return { result, peaksMb: samplers.map((sampler) => sampler.stop()) };
  } finally {
    for (const sampler of samplers) sampler.stop();
  }
}
