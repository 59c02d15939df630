import type { Db } from '../../db/database.js';
import { findAgentVersion, findLatestAgentVersionNumbers } from '../../db/agents.repository.js';
import { batchPerTurn } from '../../runs/per-turn-batch.js';

export interface AgentCode {
  name: string;
  version: number;
  code: string;
  sourceMap: string;
}

/** Published versions never change, so their compiled code is kept in memory (bounded, oldest out). */
export interface AgentCodeCache {
  latest(db: Db, name: string): Promise<AgentCode | undefined>;
  /** The latest published version's number (read now, with the other calls asking in this turn of the event loop). */
  latestVersion(db: Db, name: string): Promise<number | undefined>;
  /** The latest version this worker last read (undefined when it never read one): what a run may start on before the read confirms it. */
  lastRead(name: string): number | undefined;
  version(db: Db, name: string, version: number): Promise<AgentCode | undefined>;
}

export function createAgentCodeCache(maxEntries = 500): AgentCodeCache {
  const cache = new Map<string, AgentCode>();
  // Reads under way, by `name@version`: a burst of first runs of one agent (a deploy, a reconnect storm)
  // all miss the cache at once, and would otherwise each read the code, queued on the pool's few connections.
  const reading = new Map<string, Promise<AgentCode | undefined>>();
  const latestVersions = createLatestVersionReader();
  const remember = (agent: AgentCode) => {
    cache.set(`${agent.name}@${agent.version}`, agent);
    if (cache.size > maxEntries) cache.delete(cache.keys().next().value!);
    return agent;
  };
  return {
    // Only the version number is read per call; the code comes from the cache after its first use.
    latestVersion: (db, name) => latestVersions.read(db, name),
    lastRead: (name) => latestVersions.lastRead.get(name),
    async latest(db, name) {
      const version = await latestVersions.read(db, name);
      return version === undefined ? undefined : this.version(db, name, version);
    },
    async version(db, name, version) {
      const key = `${name}@${version}`;
      const hit = cache.get(key);
      if (hit) return hit;
      const under = reading.get(key);
      if (under) return under;
      const read = findAgentVersion(db, name, version).then((row) => row && remember({ name, version, code: row.code, sourceMap: row.source_map }));
      reading.set(key, read);
      const forget = () => void (reading.get(key) === read && reading.delete(key));
      read.then(forget, forget);
      return read;
    },
  };
}

/**
 * Reads agents' latest version numbers, one statement for all the calls that ask in the same turn of
 * the event loop (runs/per-turn-batch.ts: sent after every call it answers asked, so a version
 * published before a call started is never missed).
 */
function createLatestVersionReader(maxNames = 500): { read(db: Db, name: string): Promise<number | undefined>; lastRead: ReadonlyMap<string, number> } {
  interface Asked {
    db: Db;
    name: string;
    resolve: (version: number | undefined) => void;
    reject: (err: unknown) => void;
  }

  // What the last read said of each name (bounded, oldest out).
  const lastRead = new Map<string, number>();
  const remember = (name: string, version: number | undefined) => {
    lastRead.delete(name);
    if (version === undefined) return;
    lastRead.set(name, version);
    if (lastRead.size > maxNames) lastRead.delete(lastRead.keys().next().value!);
  };

  const answer = async (db: Db, asked: Asked[]) => {
    try {
      const names = [...new Set(asked.map((each) => each.name))];
      const versions = await findLatestAgentVersionNumbers(db, names);
      for (const name of names) remember(name, versions.get(name));
      for (const each of asked) each.resolve(versions.get(each.name));
    } catch (err) {
      for (const each of asked) each.reject(err);
    }
  };

  const ask = batchPerTurn<Asked>((batch) => {
    // One database per worker in practice; each gets its own statement all the same.
    const byDb = new Map<Db, Asked[]>();
    for (const each of batch) {
      const asked = byDb.get(each.db);
      if (asked) asked.push(each);
      else byDb.set(each.db, [each]);
    }
    for (const [db, asked] of byDb) void answer(db, asked);
  });

  return {
    read: (db, name) => new Promise((resolve, reject) => ask({ db, name, resolve, reject })),
    lastRead,
  };
}
