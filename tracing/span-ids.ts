import { randomFillSync } from 'node:crypto';

/** How many random bytes are drawn at once: ids for ~340 spans. */
const poolBytes = 8192;

/**
 * Trace and span ids (W3C trace context: 16 and 8 random bytes, in hex) cut from a pool of random
 * bytes drawn from the system's generator a few kilobytes at a time. The SDK's own generator draws
 * each id by 4-byte Math.random calls written to a buffer, which was one of the larger parts of
 * what a span costs the web process (bench:tracing).
 */
export function createSpanIdGenerator(): { generateTraceId(): string; generateSpanId(): string } {
  const pool = Buffer.allocUnsafe(poolBytes);
  let at = poolBytes;
  const take = (bytes: number): string => {
    if (at + bytes > poolBytes) {
      randomFillSync(pool);
      at = 0;
    }
    at += bytes;
    // An id of all zeros is invalid; the chance is 2^-64 at least, and a retry costs nothing.
    for (let i = at - bytes; i < at; i++) if (pool[i] !== 0) return pool.toString('hex', at - bytes, at);
    return take(bytes);
  };
  return { generateTraceId: () => take(16), generateSpanId: () => take(8) };
}
