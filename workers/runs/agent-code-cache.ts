import type { Db } from '../../db/database.js';
import { findAgentVersion, findLatestAgentVersionNumber } from '../../db/agents.repository.js';

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
  const remember = (agent: AgentCode) => {
    cache.set(`${agent.name}@${agent.version}`, agent);
    if (cache.size > maxEntries) cache.delete(cache.keys().next().value!);
    return agent;
  };
  return {
    // Only the version number is read per call; the code comes from the cache after its first use.
    async latest(db, name) {
      const version = await findLatestAgentVersionNumber(db, name);
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
