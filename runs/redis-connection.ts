import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { ConfigError, type Config } from '../shared/config.js';

/**
 * Every Redis connection of every process is opened here (DESIGN §17): a plain `Redis` on one server,
 * or, with REDIS_CLUSTER=true, a `Cluster` client that follows MOVED/ASK and outlives a master's
 * failover to its replica. Both answer the same commands; what a caller may not do on a cluster is
 * touch keys of several slots in one script or transaction (config.ts gives every key one hash tag).
 */
export type RedisClient = Redis | Cluster;

export type RedisTarget = Pick<Config, 'redisUrl' | 'redisCluster'>;

/** What a connection is for, as the options of a plain connection say it (the cluster's are derived). */
export interface ConnectionOptions {
  /** null: a command waits for the connection however long (BullMQ's blocking and subscriber connections). */
  maxRetriesPerRequest?: number | null;
  /** false: a command fails at once while the connection is down (producers answer 503 rather than wait). */
  enableOfflineQueue?: boolean;
  enableAutoPipelining?: boolean;
  autoResubscribe?: boolean;
  lazyConnect?: boolean;
  connectTimeout?: number;
  commandTimeout?: number;
  /** One attempt only (a command-line tool's single message): no reconnecting. */
  once?: boolean;
  /** Uses SSUBSCRIBE (sharded pub/sub): on a cluster, one subscriber connection per master that serves them. */
  sharded?: boolean;
}

/**
 * How long a cluster client keeps retrying a command while a slot has no reachable master (a master
 * died and its replica is not promoted yet: a few seconds with cluster-node-timeout 2 s, more with
 * Redis's default of 15 s): each redirection or retry waits `retryDelayMs`, up to `maxRedirections`.
 */
const retryDelayMs = 250;
const maxRedirections = 64;

/** How often a cluster client reads the topology again when nothing made it do so (see openRedis). */
export const slotsRefreshMs = 20_000;

/** Opens a connection to REDIS_URL: one server, or the cluster its nodes belong to. Errors are the caller's to listen to. */
export function openRedis(target: RedisTarget, options: ConnectionOptions = {}): RedisClient {
  const { once, sharded, ...redisOptions } = options;
  const urls = target.redisUrl.split(',').map((url) => url.trim()).filter(Boolean);
  if (!target.redisCluster) {
    return new Redis(urls[0]!, { ...redisOptions, ...(once ? { retryStrategy: () => null } : {}) });
  }
  const { enableOfflineQueue, enableAutoPipelining, lazyConnect, ...nodeOptions } = redisOptions;
  const clusterOptions: ClusterOptions = {
    enableReadyCheck: true,
    enableOfflineQueue,
    enableAutoPipelining,
    lazyConnect,
    maxRedirections: once ? 16 : maxRedirections,
    retryDelayOnFailover: retryDelayMs,
    retryDelayOnClusterDown: retryDelayMs,
    retryDelayOnTryAgain: retryDelayMs,
    // Reconnects to the cluster for ever when every node was lost, backing off to 2 s.
    clusterRetryStrategy: once ? () => null : (times) => Math.min(100 * times, 2000),
    // A lost node is not reconnected (ioredis's default): its connection ends, its commands are retried on
    // the slot's master as the refreshed topology names it, and a node that comes back is found by the refresh.
    // A failover makes no MOVED, but each command that meets the closed connection or CLUSTERDOWN has the
    // topology read again before its retry (and a sharded subscriber that loses its node too): the
    // periodic look only catches what no command met. It is slow because each look is a connection of
    // its own to a node (connect, CLIENT SETNAME, CLUSTER SLOTS, close: about 0.4 ms of that node's CPU),
    // made by every cluster client of every process: at 2 s, the thirty-odd clients of a web and a worker
    // process cost the cluster's nodes more CPU than an idle cluster spends on itself.
    slotsRefreshInterval: slotsRefreshMs,
    shardedSubscribers: sharded,
    redisOptions: { ...nodeOptions, ...credentialsOf(urls[0]!) },
  };
  return new Cluster(urls.map(nodeOf), clusterOptions);
}

function nodeOf(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port || 6379) };
}

/** What the URL says besides where the node is; the same for every node of a cluster. */
function credentialsOf(url: string): Pick<RedisOptions, 'username' | 'password' | 'tls'> {
  const parsed = new URL(url);
  return {
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/** True when `client` is a cluster client. */
export function isCluster(client: RedisClient): client is Cluster {
  return client instanceof Cluster;
}

/** Resolves once the connection is ready for commands (a cluster: its slots known and its state ok). */
export function waitForReady(client: RedisClient): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => client.once('ready', () => resolve()));
}

/**
 * Stops start-up with a message naming REDIS_CLUSTER when it says the opposite of what the server at
 * REDIS_URL is (a plain client on a cluster node fails on every key of another node's slots; a cluster
 * client on a plain server never becomes ready). A server that cannot be reached is not judged: the
 * connections wait for it.
 */
export async function checkRedisMode(target: RedisTarget): Promise<void> {
  const url = target.redisUrl.split(',')[0]!.trim();
  const probe = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 3000, commandTimeout: 3000 });
  probe.on('error', () => undefined);
  let clusterEnabled: boolean;
  try {
    await probe.connect();
    clusterEnabled = /^cluster_enabled:1/m.test(await probe.info('cluster'));
  } catch {
    return;
  } finally {
    probe.disconnect();
  }
  if (clusterEnabled && !target.redisCluster) throw new ConfigError('Invalid configuration:\n  REDIS_CLUSTER: REDIS_URL names a node of a Redis Cluster; set REDIS_CLUSTER=true');
  if (!clusterEnabled && target.redisCluster) throw new ConfigError('Invalid configuration:\n  REDIS_CLUSTER: REDIS_URL names a Redis that is not a cluster node; set REDIS_CLUSTER=false');
}
