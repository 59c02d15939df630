import type { Db } from '../../db/database.js';
import { findAgentVersion, findLatestAgentVersion } from '../../db/agents.repository.js';

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
    async latest(db, name) {
      const row = await findLatestAgentVersion(db, name);
      return row && remember({ name, version: row.version, code: row.code, sourceMap: row.source_map });
    },
    async version(db, name, version) {
      const hit = cache.get(`${name}@${version}`);
      if (hit) return hit;
      const row = await findAgentVersion(db, name, version);
      return row && remember({ name, version, code: row.code, sourceMap: row.source_map });
    },
  };
}
