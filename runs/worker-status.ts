import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { workerStatusKey } from '../shared/channels.js';
import type { RedisClient } from './redis-connection.js';

/**
 * Each live worker process, as the console's Queues page shows it (DESIGN §18). Workers have no HTTP
 * server and there may be many, so each writes its status into one Redis hash every few seconds; a web
 * process reads the hash and leaves out (and removes) the statuses not renewed in time: a worker that
 * died is gone from the page within `workerStatusStaleMs`.
 */
export interface WorkerStatus {
  /** host:pid:random, unique per process start. */
  id: string;
  host: string;
  pid: number;
  startedAt: string;
  /** When this status was written. */
  seenAt: string;
  /** Runs it holds: started, waiting on the host, or waiting for their conversation's turn. */
  runsInFlight: number;
  /** WORKER_CONCURRENCY: runs it holds at most. */
  concurrency: number;
  rssMb: number;
  /** WORKER_MEMORY_MB: above it, it takes no new run. */
  memoryBudgetMb: number;
  /** False while over its memory budget (or closing): its runs go on, it takes no new one. */
  takingRuns: boolean;
}

export const workerStatusEveryMs = 2_000;
export const workerStatusStaleMs = 10_000;

/** A new worker's id. */
export function newWorkerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

/**
 * Writes `read()` every `workerStatusEveryMs` until stopped; stopping removes it at once (a clean
 * shutdown leaves no stale worker). A failed write is skipped: the next one renews it.
 */
export function startWorkerStatus(redis: RedisClient, prefix: string, read: () => WorkerStatus): { stop(): Promise<void> } {
  const key = workerStatusKey(prefix);
  const write = () => {
    const status = read();
    void redis
      .hset(key, status.id, JSON.stringify(status))
      .then(() => redis.pexpire(key, workerStatusStaleMs * 6))
      .catch(() => undefined);
  };
  write();
  const timer = setInterval(write, workerStatusEveryMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await redis.hdel(key, read().id).catch(() => undefined);
    },
  };
}

/** The live workers' statuses, by id; statuses older than `workerStatusStaleMs` are removed. */
export async function readWorkerStatuses(redis: RedisClient, prefix: string): Promise<WorkerStatus[]> {
  const key = workerStatusKey(prefix);
  const hash = await redis.hgetall(key);
  const live: WorkerStatus[] = [];
  const stale: string[] = [];
  for (const [id, text] of Object.entries(hash)) {
    const status = parseStatus(text);
    // Real time, as the workers write it (a web process's test clock must not age them).
    if (status && Date.now() - Date.parse(status.seenAt) <= workerStatusStaleMs) live.push(status);
    else stale.push(id);
  }
  if (stale.length) await redis.hdel(key, ...stale);
  return live.sort((a, b) => a.id.localeCompare(b.id));
}

function parseStatus(text: string): WorkerStatus | undefined {
  try {
    const status = JSON.parse(text) as WorkerStatus;
    return typeof status.seenAt === 'string' && typeof status.id === 'string' ? status : undefined;
  } catch {
    return undefined;
  }
}
