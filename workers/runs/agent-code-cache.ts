import type { Db } from '../../db/database.js';
import { findAgentVersion, findLatestAgentVersionNumbers } from '../../db/agents.repository.js';

export interface AgentCode {
  name: string;
  version: number;
  code: string;
  sourceMap: string;
}

/** Published versions never change, so their compiled code is kept in memory (bounded, oldest out). */
export interface AgentCodeCache {
  latest(db: Db, name: string): Promise<AgentCode | undefined>;
  version(db: Db, name: string, version: number): Promise<AgentCode | undefined>;
}

export function createAgentCodeCache(maxEntries = 500): AgentCodeCache {
  const cache = new Map<string, AgentCode>();
  const latestVersions = createLatestVersionReader();
  const remember = (agent: AgentCode) => {
    cache.set(`${agent.name}@${agent.version}`, agent);
    if (cache.size > maxEntries) cache.delete(cache.keys().next().value!);
    return agent;
  };
  return {
    // Only the version number is read per call; the code comes from the cache after its first use.
    async latest(db, name) {
      const version = await latestVersions.read(db, name);
      return version === undefined ? undefined : this.version(db, name, version);
    },
    async version(db, name, version) {
      const hit = cache.get(`${name}@${version}`);
      if (hit) return hit;
      const row = await findAgentVersion(db, name, version);
      return row && remember({ name, version, code: row.code, sourceMap: row.source_map });
    },
  };
}

/**
 * Reads agents' latest version numbers, one statement for all the calls that ask in the same turn of
 * the event loop. Each statement is sent after the calls it answers asked, so a version published
 * before a call started is never missed.
 */
function createLatestVersionReader(): { read(db: Db, name: string): Promise<number | undefined> } {
  type Waiting = Map<string, Array<{ resolve: (version: number | undefined) => void; reject: (err: unknown) => void }>>;
  const pending = new Map<Db, Waiting>();

  const flush = async (db: Db) => {
    const waiting = pending.get(db)!;
    pending.delete(db);
    try {
      const versions = await findLatestAgentVersionNumbers(db, [...waiting.keys()]);
      for (const [name, callers] of waiting) for (const caller of callers) caller.resolve(versions.get(name));
    } catch (err) {
      for (const callers of waiting.values()) for (const caller of callers) caller.reject(err);
    }
  };

  return {
    read(db, name) {
      return new Promise((resolve, reject) => {
        let waiting = pending.get(db);
        if (!waiting) {
          pending.set(db, (waiting = new Map()));
          setImmediate(() => void flush(db));
        }
        const callers = waiting.get(name);
        if (callers) callers.push({ resolve, reject });
        else waiting.set(name, [{ resolve, reject }]);
      });
    },
  };
}
