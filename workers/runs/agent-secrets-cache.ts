import { openSecret, type SecretSet } from '../../shared/agent-secrets.js';
import type { SecretBox } from '../../shared/secret-box.js';
import type { Db } from '../../db/database.js';
import { findAgentSecrets } from '../../db/agent-secrets.repository.js';

/**
 * The secrets of the agent names this worker runs (DESIGN §13), opened, so a run costs no read of
 * them. Each agent name has two sets, kept apart (a draft's run gets only the drafts set). Both sets
 * of an agent name are dropped when a change to it is announced on the control channel, and each is
 * read again after `maxAgeMs` in case an announcement was missed (Redis down when it was made).
 */
export interface AgentSecretsCache {
  get(db: Db, agentName: string, set: SecretSet): Promise<Readonly<Record<string, string>>>;
  /** Drops both sets of the agent name: the announcement does not say which changed. */
  drop(agentName: string): void;
}

const maxAgeMs = 60_000;
const sets: readonly SecretSet[] = ['production', 'drafts'];

export function createAgentSecretsCache(box: SecretBox, now: () => number = Date.now): AgentSecretsCache {
  const cached = new Map<string, { secrets: Promise<Readonly<Record<string, string>>>; at: number }>();
  return {
    get(db, agentName, set) {
      const key = cacheKey(agentName, set);
      const entry = cached.get(key);
      if (entry && now() - entry.at < maxAgeMs) return entry.secrets;
      const secrets = readSecrets(db, box, agentName, set);
      cached.set(key, { secrets, at: now() });
      // A failed read is not kept: the next run tries again.
      secrets.catch(() => cached.get(key)?.secrets === secrets && cached.delete(key));
      return secrets;
    },
    drop(agentName) {
      for (const set of sets) cached.delete(cacheKey(agentName, set));
    },
  };
}

/** Agent names never contain a space, so no name's key can stand for another's. */
function cacheKey(agentName: string, set: SecretSet): string {
  return `${set} ${agentName}`;
}

async function readSecrets(db: Db, box: SecretBox, agentName: string, set: SecretSet): Promise<Readonly<Record<string, string>>> {
  const rows = await findAgentSecrets(db, agentName, set);
  const secrets: Record<string, string> = {};
  for (const row of rows) secrets[row.key] = openSecret(box, agentName, row.key, set, row.sealed);
  return Object.freeze(secrets);
}
