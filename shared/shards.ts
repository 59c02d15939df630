import { createHash, randomUUID } from 'node:crypto';
import { clusterSlots, crc16, keySlot } from './key-slot.js';

/**
 * Conversations spread over REDIS_SHARDS shards (DESIGN §17). A conversation belongs to one shard by a
 * hash of its id; a shard's keys (its run queue, turn queues, run event lists and channels) start with
 * its own prefix, whose hash tag is chosen so that shard i's slot falls in the i-th of N equal slot
 * ranges: N shards on N masters of a cluster with evenly split slots land one on each, whatever the
 * QUEUE_PREFIX. A run's id is drawn so that it hashes to its conversation's shard: a run is found on
 * its shard from its id alone (attach, cancel, lost runs). With one shard, its prefix is the prefix.
 */
export interface Shards {
  /** The shards' key prefixes, by shard number. */
  readonly prefixes: readonly string[];
  /** The shard a conversation or a run belongs to (by a hash of its id). */
  of(id: string): number;
  /** The key prefix of the shard a conversation or a run belongs to. */
  prefixOf(id: string): string;
  /** A new run id (a random UUID) on the conversation's shard. */
  runIdFor(convid: string): string;
  /**
   * The run id that `seed` names, on the conversation's shard: the same seed gives the same id, in
   * every process (a child run's id is fixed before it starts, DESIGN §19).
   */
  runIdFrom(seed: string, convid: string): string;
}

export function createShards(prefix: string, count: number): Shards {
  const prefixes = count === 1 ? [prefix] : Array.from({ length: count }, (_, shard) => shardPrefix(prefix, shard, count));
  const of = (id: string) => (count === 1 ? 0 : crc16(id) % count);
  return {
    prefixes,
    of,
    prefixOf: (id) => prefixes[of(id)]!,
    runIdFor(convid) {
      const shard = of(convid);
      for (;;) {
        const runId = randomUUID();
        if (of(runId) === shard) return runId;
      }
    },
    runIdFrom(seed, convid) {
      const shard = of(convid);
      for (let n = 0; ; n += 1) {
        const runId = uuidFrom(n === 0 ? seed : `${seed}#${n}`);
        if (of(runId) === shard) return runId;
      }
    },
  };
}

/** A UUID (version 8, RFC 9562: made by the application) that is a hash of `seed`. */
export function uuidFrom(seed: string): string {
  const bytes = createHash('sha256').update(seed).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Shard `shard`'s prefix: `prefix` with its hash tag's content (or, without one, the whole prefix in a
 * tag) followed by `.s<shard>`, and `.<n>` for the first n that puts the tag's slot in the shard's range.
 */
export function shardPrefix(prefix: string, shard: number, count: number): string {
  const open = prefix.indexOf('{');
  const close = open < 0 ? -1 : prefix.indexOf('}', open + 1);
  const tagged = close > open + 1;
  const content = tagged ? prefix.slice(open + 1, close) : prefix;
  const from = Math.floor((shard * clusterSlots) / count);
  const to = Math.floor(((shard + 1) * clusterSlots) / count);
  for (let n = 0; ; n += 1) {
    const tag = n === 0 ? `${content}.s${shard}` : `${content}.s${shard}.${n}`;
    const slot = keySlot(`{${tag}}`);
    if (slot >= from && slot < to) return tagged ? `${prefix.slice(0, open)}{${tag}}${prefix.slice(close + 1)}` : `{${tag}}`;
  }
}

const made = new Map<string, Shards>();

/** The installation's shards, as its configuration says them (made once per prefix and count). */
export function shardsOf(config: { queuePrefix: string; redisShards: number }): Shards {
  const key = `${config.redisShards}:${config.queuePrefix}`;
  let shards = made.get(key);
  if (!shards) made.set(key, (shards = createShards(config.queuePrefix, config.redisShards)));
  return shards;
}
