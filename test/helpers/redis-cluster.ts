import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { openRedis, type RedisClient } from '../../runs/redis-connection.js';

/** The test cluster (.ci/redis-cluster starts it): any one of its nodes. */
export const testClusterUrl = process.env.TEST_REDIS_CLUSTER_URL ?? 'redis://127.0.0.1:7101';

const startScript = fileURLToPath(new URL('../../../.ci/redis-cluster', import.meta.url));

/** A node as CLUSTER SLOTS names it. */
export interface ClusterNode {
  host: string;
  port: number;
}

/** The masters and the slot ranges each serves, as `node` sees them. */
export async function clusterMasters(node: Redis): Promise<{ node: ClusterNode; ranges: [number, number][] }[]> {
  const slots = (await node.cluster('SLOTS')) as unknown as [number, number, [string, number, string], ...unknown[]][];
  const masters = new Map<string, { node: ClusterNode; ranges: [number, number][] }>();
  for (const [from, to, [host, port]] of slots) {
    const key = `${host}:${port}`;
    if (!masters.has(key)) masters.set(key, { node: { host, port }, ranges: [] });
    masters.get(key)!.ranges.push([from, to]);
  }
  return [...masters.values()];
}

/** The master serving `key`'s slot, as `node` sees it. */
export async function masterOf(node: Redis, key: string): Promise<ClusterNode | undefined> {
  const slot = Number(await node.cluster('KEYSLOT', key));
  return (await clusterMasters(node)).find((m) => m.ranges.some(([from, to]) => slot >= from && slot <= to))?.node;
}

/** True when the cluster answers with every slot served; undefined when it cannot be reached at all. */
export async function clusterReachable(url = testClusterUrl): Promise<boolean> {
  const node = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  node.on('error', () => undefined);
  try {
    await node.connect();
    return /cluster_state:ok/.test(String(await node.cluster('INFO')));
  } catch {
    return false;
  } finally {
    node.disconnect();
  }
}

/** A plain connection to one node. */
export function nodeConnection(node: ClusterNode): Redis {
  const redis = new Redis({ host: node.host, port: node.port, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  return redis;
}

/** A cluster client for the test's own reads and clean-up. */
export function clusterClient(url = testClusterUrl): RedisClient {
  const client = openRedis({ redisUrl: url, redisCluster: true }, { maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  return client;
}

/** Deletes every key matching `pattern` on every master. */
export async function deleteClusterKeys(url: string, pattern: string): Promise<void> {
  const seed = new Redis(url);
  try {
    for (const { node } of await clusterMasters(seed)) {
      const master = nodeConnection(node);
      try {
        let cursor = '0';
        do {
          const [next, keys] = await master.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
          cursor = next;
          // One key at a time: keys of different slots cannot go in one DEL on a cluster.
          for (const key of keys) await master.del(key);
        } while (cursor !== '0');
      } finally {
        master.disconnect();
      }
    }
  } finally {
    seed.disconnect();
  }
}

/** Kills the node's process (SIGKILL, as a crash): it answers INFO with its pid first. */
export async function killNode(node: ClusterNode): Promise<void> {
  const redis = nodeConnection(node);
  const pid = Number(/process_id:(\d+)/.exec(await redis.info('server'))![1]);
  redis.disconnect();
  process.kill(pid, 'SIGKILL');
}

/** Starts the nodes that are down again and waits until the cluster is whole (.ci/redis-cluster). */
export async function healCluster(): Promise<void> {
  await promisify(execFile)(startScript, [], { timeout: 90_000 });
}
