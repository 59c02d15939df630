import { readFileSync } from 'node:fs';

/**
 * Read and write system calls made by processes (`syscr` and `syscw` of /proc/<pid>/io: socket reads
 * and writes included). On a virtual machine a write to a loopback socket is one of the costliest
 * steps of a call, and the count per call moves far less with the machine's other load than CPU time
 * or latency do (a busier worker packs more events in a batch): it tells whether a change sends fewer
 * messages between processes.
 */
export interface SyscallCount {
  reads: number;
  writes: number;
}

/** The counts in the text of /proc/<pid>/io; null when it has none. */
export function parseProcIo(text: string): SyscallCount | null {
  const field = (name: string) => {
    const match = new RegExp(`^${name}:\\s*(\\d+)$`, 'm').exec(text);
    return match ? Number(match[1]) : undefined;
  };
  const reads = field('syscr');
  const writes = field('syscw');
  return reads === undefined || writes === undefined ? null : { reads, writes };
}

/** Each process's counts so far, in order; null for one whose counts cannot be read. */
export function readSyscalls(pids: number[]): (SyscallCount | null)[] {
  return pids.map((pid) => {
    try {
      return parseProcIo(readFileSync(`/proc/${pid}/io`, 'utf8'));
    } catch {
      return null;
    }
  });
}

/** The calls made between two readings, divided by `per` (e.g. the runs made meanwhile), to one decimal. */
export function syscallsPer(from: SyscallCount | null, to: SyscallCount | null, per: number): SyscallCount | null {
  if (!from || !to || per <= 0) return null;
  const tenth = (n: number) => Math.round((n / per) * 10) / 10;
  return { reads: tenth(to.reads - from.reads), writes: tenth(to.writes - from.writes) };
}
