import { setFlagsFromString } from 'node:v8';
import ivm from 'isolated-vm';
import { noteProcessThreads } from './isolate-threads.js';
import type { SandboxRun } from './sandbox.types.js';

/**
 * Buffers that grow outside the heap do not exist in an isolate (DESIGN §12). V8 commits the memory of
 * a resizable ArrayBuffer (`maxByteLength`, `resize`) or a growable SharedArrayBuffer (`grow`) itself,
 * past isolated-vm's allocator, so their growth counted against no limit: one run held 2 GiB. Without
 * the feature the constructors ignore `maxByteLength` and there is no `resize` or `grow`; every other
 * buffer is allocated by isolated-vm's allocator and counts in AGENT_MEMORY_MB. The flag is read as
 * each context is made, so it is set before the first isolate; the process's own isolate does not use
 * the feature. (WebAssembly, whose memory is outside the heap too, is removed by the lockdown.)
 */
setFlagsFromString('--no-harmony-rab-gsab');

/**
 * The worker's `node` runs with `--max-semi-space-size=32` (a young generation that suits its own heap,
 * docs/operations.md); V8 gives that to every isolate made while the flag is set, over isolated-vm's
 * young generation sized for the isolate's limit: an isolate filling a 32 MB heap with small objects
 * then took 214 MB of RSS instead of 66. The process's own heap was sized at its start and keeps its
 * young generation (measured: new space 64 MB either way); isolates made from now on get theirs.
 */
setFlagsFromString('--max-semi-space-size=0');

/**
 * What the runs sharing an isolate have in common: the same compiled code of the same agent, the
 * same memory limit, and the same caller. Runs of one caller may share an isolate (each in a context
 * of its own); runs of two callers never do, so nothing one caller's run does to its isolate (fill
 * its heap, keep it busy) reaches another caller's run (DESIGN §12).
 */
export interface TenancyKey {
  readonly code: string;
  readonly agentName: string;
  readonly memoryMb: number;
  /** `kind:id` of the caller; '' for a run that shares with nobody (a draft). */
  readonly tenant: string;
}

/** An isolate and the contexts loaded into it (agent-context.ts), idle or running. */
export interface SandboxIsolate {
  readonly isolate: ivm.Isolate;
  readonly key: TenancyKey;
  /** Contexts loaded into it and not released yet. */
  contexts: number;
  /** Loads and runs under way in it (a run counts until its result is back). */
  inFlight: number;
  /**
   * A context of it was discarded (its run may have left code to run, or a sync entry was
   * interrupted). Never entered synchronously again: the host's thread must never wait
   * on an isolate that may be busy (agent-context.ts).
   */
  restless: boolean;
  /** Set when we dispose it ourselves; a disposed isolate without it hit its memory limit. */
  disposedBecause?: string;
  /**
   * V8 ran out of memory in it in a way isolated-vm cannot end cleanly (a Map or Set growing its table
   * past the heap limit): its thread is parked for good and nothing under way in it ever answers. The
   * runs in it are ended by the run watch (run-watch.ts); the isolate is disposed and never used again.
   */
  lost?: boolean;
}

export function tenancyKeyOf(run: Pick<SandboxRun, 'code' | 'agentName' | 'memoryMb' | 'caller' | 'fresh'>): TenancyKey {
  return {
    code: run.code,
    agentName: run.agentName,
    memoryMb: run.memoryMb,
    tenant: run.fresh ? '' : `${run.caller.kind}:${run.caller.id}`,
  };
}

/**
 * The heap limit isolated-vm is given for AGENT_MEMORY_MB: half of it. V8 lets a heap of small objects
 * grow to about twice its limit before isolated-vm's check after a full collection ends it (measured:
 * 108–136 MB of RSS for a 64 MB limit, 64–68 MB for 32), so half keeps the isolate's RSS within
 * AGENT_MEMORY_MB (DESIGN §12: never more RSS than the limit). Buffers count against the same half.
 * isolated-vm takes no less than 8 MB.
 */
export function heapLimitMb(memoryMb: number): number {
  return Math.max(8, Math.floor(memoryMb / 2));
}

/**
 * A new isolate. The heap limit is the isolate's: the runs sharing it share it (DESIGN §12, "the
 * isolate is disposed" beyond it), and so do their contexts' own fixed cost, 209 KB of live heap a
 * loaded context (its built-ins ~140 KB, the bootstrap's code and objects ~26 KB, the lockdown ~45
 * KB; measured with 60 in one isolate): 32 contexts take ~6.7 MB of a 32 MB limit. A limit raised by
 * that much was tried and not kept: a Map outgrowing a 40 MB heap took 1.7–2.7 s of CPU to end
 * instead of 0.2 s at 32 MB (its table's doubling past the limit comes at 42 MB instead of 21 MB), and
 * the isolate's RSS would no longer stay within AGENT_MEMORY_MB.
 */
export function createSandboxIsolate(key: TenancyKey): SandboxIsolate {
  noteProcessThreads();
  const sandbox: SandboxIsolate = {
    // Without the handler, such an out-of-memory aborts the whole process.
    isolate: new ivm.Isolate({ memoryLimit: heapLimitMb(key.memoryMb), onCatastrophicError: () => loseSandboxIsolate(sandbox) }),
    key,
    contexts: 0,
    inFlight: 0,
    restless: false,
  };
  return sandbox;
}

// Isolates lost so far in this process: each parks a thread for good (process-exit.ts).
let lost = 0;

export function lostIsolateCount(): number {
  return lost;
}

/** isolated-vm gave up on the isolate (SandboxIsolate `lost`): dispose of it, counting as its memory limit. */
function loseSandboxIsolate(sandbox: SandboxIsolate): void {
  lost += 1;
  sandbox.lost = true;
  sandbox.restless = true;
  try {
    sandbox.isolate.dispose();
  } catch {
    // Already disposed.
  }
}

export function isDisposed(sandbox: SandboxIsolate): boolean {
  return sandbox.isolate.isDisposed;
}

/** The isolate's CPU time so far (ns, counting code running now), or undefined once it is disposed. */
export function isolateCpuTime(sandbox: SandboxIsolate): bigint | undefined {
  try {
    return sandbox.isolate.isDisposed ? undefined : sandbox.isolate.cpuTime;
  } catch {
    return undefined;
  }
}

/**
 * Nothing can be running in the isolate: no load or run under way in it, and no context of it
 * discarded with code it may have left running. Only then may the host's thread enter it or read it
 * synchronously; otherwise it would wait for whatever runs there (an agent's busy loop included).
 */
export function isIsolateIdle(sandbox: SandboxIsolate): boolean {
  return sandbox.inFlight === 0 && !sandbox.restless && !sandbox.isolate.isDisposed;
}

/** Disposes the isolate, ending whatever still runs in it; `reason` is what those runs are told. */
export function disposeSandboxIsolate(sandbox: SandboxIsolate, reason: string): void {
  if (sandbox.isolate.isDisposed) return;
  sandbox.disposedBecause = reason;
  try {
    sandbox.isolate.dispose();
  } catch {
    // Already disposed by isolated-vm (memory limit) between the check and the call.
  }
}

/** Why runs in a disposed isolate ended: ours, or else the heap limit. */
export function disposalReason(sandbox: SandboxIsolate): string {
  return sandbox.disposedBecause ?? `memory limit exceeded: the agent used more than ${sandbox.key.memoryMb} MB`;
}
