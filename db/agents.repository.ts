import { sql } from 'kysely';
import type { Db } from './database.js';
import type { AgentVersion } from './schema.js';

export interface CompiledAgent {
  source: string;
  code: string;
  sourceMap: string;
}

/** Stores a new version of the agent (creating the agent at version 1); returns the version number. */
export async function insertAgentVersion(db: Db, name: string, agent: CompiledAgent): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const { latest_version: version } = await trx
      .insertInto('agents')
      .values({ name, latest_version: 1 })
      .onConflict((oc) =>
        oc.column('name').doUpdateSet({ latest_version: sql`agents.latest_version + 1`, updated_at: new Date() }),
      )
      .returning('latest_version')
      .executeTakeFirstOrThrow();
    await trx
      .insertInto('agent_versions')
      .values({ agent_name: name, version, source: agent.source, code: agent.code, source_map: agent.sourceMap })
      .execute();
    return version;
  });
}

/** The newest published version of each named agent that exists. */
export async function findLatestAgentVersionNumbers(db: Db, names: readonly string[]): Promise<Map<string, number>> {
  if (names.length === 0) return new Map();
  const rows = await db.selectFrom('agents').select(['name', 'latest_version']).where('name', 'in', names).execute();
  return new Map(rows.map((row) => [row.name, row.latest_version]));
}

export async function findAgentVersion(db: Db, name: string, version: number): Promise<AgentVersion | undefined> {
  return db
    .selectFrom('agent_versions')
    .selectAll()
    .where('agent_name', '=', name)
    .where('version', '=', version)
    .executeTakeFirst();
}

/** Every published agent with its newest version number, by name. */
export async function listPublishedAgents(db: Db): Promise<{ name: string; latest_version: number; updated_at: Date }[]> {
  return db.selectFrom('agents').select(['name', 'latest_version', 'updated_at']).orderBy('name').execute();
}
