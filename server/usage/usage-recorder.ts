import type { Middleware } from 'koa';
import { agentNamePattern, type Principal, type ResultCode } from '../../shared/api.js';
import type { Clock } from '../../shared/clock.js';
import type { Logger } from '../../shared/logger.js';
import type { Db } from '../../db/database.js';
import { insertUsageRecords, type UsageRecord } from '../../db/usage.repository.js';
import { usageOf } from './call-usage.js';

/** Collects usage records in memory and writes them in batches, off the request path. */
export interface UsageRecorder {
  /** Buffers one record; synchronous and cheap, never touches the database. */
  record(row: UsageRecord): void;
  /** Writes everything buffered; resolves false when the database refused (the rows stay buffered). */
  flush(): Promise<boolean>;
  /** Stops the timer and writes everything buffered (a clean shutdown loses no row). */
  close(): Promise<void>;
}

export interface UsageRecorderOptions {
  flushEveryMs: number;
  /** A flush starts as soon as this many rows wait, without waiting for the timer. */
  batchRows: number;
  /** While the database refuses, at most this many rows are kept; the oldest are dropped. */
  maxBufferedRows: number;
}

const defaults: UsageRecorderOptions = { flushEveryMs: 1000, batchRows: 200, maxBufferedRows: 10_000 };
const closeAttempts = 3;
const closeRetryMs = 200;

/**
 * A recorder that writes its buffer every `flushEveryMs` or when `batchRows` wait, one flush at a time.
 * A failed write keeps its rows, in order, for the next tick; the buffer is bounded so an outage of the
 * database costs the oldest rows (logged), never the process's memory.
 */
export function createUsageRecorder(db: Db, logger: Logger, options: Partial<UsageRecorderOptions> = {}): UsageRecorder {
  const { flushEveryMs, batchRows, maxBufferedRows } = { ...defaults, ...options };
  let buffer: UsageRecord[] = [];
  let flushing: Promise<boolean> | undefined;
  let flushScheduled = false;
  let lastFlushFailed = false;
  let dropped = 0;
  let closed = false;

  const keepWithinBound = () => {
    const excess = buffer.length - maxBufferedRows;
    if (excess <= 0) return;
    buffer = buffer.slice(excess);
    dropped += excess;
  };

  const writeBuffer = async (): Promise<boolean> => {
    // Rows recorded while a batch is being written are picked up by the next turn of the loop.
    while (buffer.length) {
      const batch = buffer;
      buffer = [];
      try {
        await insertUsageRecords(db, batch);
      } catch (err) {
        buffer = batch.concat(buffer);
        keepWithinBound();
        lastFlushFailed = true;
        logger.warn({ err: String(err), buffered: buffer.length }, 'usage records not written; retrying');
        return false;
      }
    }
    lastFlushFailed = false;
    return true;
  };

  const flush = (): Promise<boolean> => {
    if (dropped) {
      logger.warn({ dropped }, 'usage records dropped: the database refused them for too long');
      dropped = 0;
    }
    flushing ??= writeBuffer().finally(() => (flushing = undefined));
    return flushing;
  };

  const timer = setInterval(() => void flush(), flushEveryMs);
  timer.unref();

  return {
    record(row) {
      if (closed) {
        logger.warn({ endpoint: row.endpoint }, 'usage record after close; dropped');
        return;
      }
      buffer.push(row);
      keepWithinBound();
      // While the database refuses, retries wait for the timer rather than follow every call.
      if (buffer.length >= batchRows && !flushing && !flushScheduled && !lastFlushFailed) {
        flushScheduled = true;
        setImmediate(() => {
          flushScheduled = false;
          void flush();
        });
      }
    },
    flush,
    async close() {
      closed = true;
      clearInterval(timer);
      await flushing;
      for (let attempt = 1; attempt <= closeAttempts; attempt++) {
        if (await flush()) return;
        if (attempt < closeAttempts) await new Promise((resolve) => setTimeout(resolve, closeRetryMs));
      }
      logger.error({ lost: buffer.length }, 'usage records lost at shutdown: the database refused them');
    },
  };
}

/**
 * Records every call made with a bearer key once its response has finished (a stream at its end), so
 * it sees the final status as the error middleware set it. Calls without a service account (cookie
 * calls, failed authentication) are not recorded.
 * - agentName: what the route told (recordUsageOf: a draft validation names its draft's agent), else
 *   the body's when it is a valid agent name.
 * - resultCode: what the route told (recordUsageOf: streams, when their end event goes out), else a
 *   JSON body's `resultCode`.
 * - at: when the call arrived; durationMs: until its response finished.
 */
export function recordUsage(recorder: UsageRecorder, clock: Clock): Middleware {
  return async (ctx, next) => {
    const at = clock.now();
    const started = performance.now();
    let done = false;
    const recordCall = () => {
      if (done) return;
      done = true;
      const principal = ctx.state.principal as Principal | undefined;
      if (principal?.kind !== 'serviceAccount') return;
      const usage = usageOf(ctx);
      recorder.record({
        serviceAccountId: principal.id,
        name: typeof ctx.state.accountName === 'string' ? ctx.state.accountName : principal.id,
        role: principal.role,
        endpoint: ctx.path,
        agentName: usage.agentName ?? agentNameOf((ctx.request as { body?: unknown }).body),
        resultCode: usage.resultCode ?? resultCodeOf(ctx.body),
        httpStatus: ctx.status,
        durationMs: Math.round(performance.now() - started),
        at,
      });
    };
    ctx.res.once('finish', recordCall).once('close', recordCall);
    await next();
  };
}

function agentNameOf(body: unknown): string | null {
  const agentName = isPlainObject(body) ? body.agentName : undefined;
  return typeof agentName === 'string' && agentNamePattern.test(agentName) ? agentName : null;
}

function resultCodeOf(body: unknown): ResultCode | null {
  const resultCode = isPlainObject(body) ? body.resultCode : undefined;
  return typeof resultCode === 'string' ? (resultCode as ResultCode) : null;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
