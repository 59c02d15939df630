import { readdirSync, stat } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * The scheduling priority of the threads that run agent code (DESIGN §12: the threads that run agent
 * code yield to the process's event loop). isolated-vm runs isolates on threads of its own, made as
 * it needs them (a pool, and a thread per task beyond it); they start at the priority of the thread
 * that made them, the event loop's. Every thread made after the first isolate (those before it are
 * the process's own: the event loop, V8's and libuv's workers) is moved to `agentThreadNice`, so a
 * caller computing in as many isolates as it likes takes only the CPU the event loop leaves: /healthz
 * and the other callers' requests are served first. Linux applies setpriority to a single thread when
 * given its id; elsewhere the ids are not listed and nothing changes. AGENT_THREAD_NICE sets the
 * niceness (19, the lowest priority; 0 leaves the threads as they are).
 */
let agentThreadNice = 19;

/** The niceness of the threads that run agent code (AGENT_THREAD_NICE), for threads moved from now on. */
export function setAgentThreadNice(nice: number): void {
  agentThreadNice = nice;
}

const taskDir = '/proc/self/task';
// Threads that were there before any isolate, or were already moved.
let known: Set<string> | undefined;

/** Records the process's own threads; call before the first isolate is made. */
export function noteProcessThreads(): void {
  if (known) return;
  // libuv makes its worker threads on the first request that needs one: make them now, so they are
  // counted among the process's own and keep the event loop's priority.
  stat('.', () => {});
  known = new Set(listThreads());
}

/** Moves the threads made since the last call (isolated-vm's) to `agentThreadNice`. Cheap: one directory read. */
export function lowerNewThreads(): void {
  if (!known) noteProcessThreads();
  if (agentThreadNice === 0) return;
  for (const id of listThreads()) {
    if (known!.has(id)) continue;
    known!.add(id);
    try {
      setPriority(Number(id), agentThreadNice);
    } catch {
      // The thread ended meanwhile (isolated-vm's threads beyond its pool live for one task).
    }
  }
  // Threads that ended are forgotten, so a reused id is moved again.
  if (known!.size > 4096) {
    const alive = new Set(listThreads());
    known = new Set([...known!].filter((id) => alive.has(id)));
  }
}

function listThreads(): string[] {
  try {
    return readdirSync(taskDir);
  } catch {
    return [];
  }
}
