import { AppError } from '../../shared/errors.js';
import { findLatestAgentVersionNumbers } from '../../db/agents.repository.js';
import type { Db } from '../../db/database.js';

/**
 * Which agents are published, as this web process has seen them: a streamed call is refused 404
 * `agentNotFound` before its stream starts (its 200 and `start` event would name a run that never
 * runs). Agents are never unpublished, so a name found once is kept for the life of the process and
 * costs no more reads; a name not found is read again at its next call (it may be published meanwhile).
 */
export interface PublishedAgents {
  /** Resolves when `agentName` is published; throws AppError `agentNotFound` otherwise. */
  requirePublished(agentName: string): Promise<void>;
}

/** Past this many names the set starts again empty (a bound on memory, not an eviction policy). */
const maxNames = 10_000;

export function createPublishedAgents(db: Db): PublishedAgents {
  const known = new Set<string>();
  return {
    async requirePublished(agentName) {
      if (known.has(agentName)) return;
      const found = await findLatestAgentVersionNumbers(db, [agentName]);
      if (!found.has(agentName)) throw new AppError('agentNotFound', `No agent is named ${agentName}.`);
      if (known.size >= maxNames) known.clear();
      known.add(agentName);
    },
  };
}
