import { openSecret } from '../../shared/agent-secrets.js';
import type { SecretBox } from '../../shared/secret-box.js';
import type { Db } from '../../db/database.js';
import { findAgentSecrets } from '../../db/agent-secrets.repository.js';

/**
 * The secrets of the agent names this worker runs (DESIGN §13), opened, so a run costs no read of
 * them. Dropped for an agent name when a change is announced on the control channel, and read again
 * after `maxAgeMs` in case an announcement was missed (Redis down when it was made).
 */
export interface AgentSecretsCache {
  get(db: Db, agentName: string): Promise<Readonly<Record<string, string>>>;
  drop(agentName: string): void;
}

const maxAgeMs = 60_000;

export function createAgentSecretsCache(box: SecretBox, now: () => number = Date.now): AgentSecretsCache {
  const cached = new Map<string, { secrets: Promise<Readonly<Record<string, string>>>; at: number }>();
  return {
    get(db, agentName) {
      const entry = cached.get(agentName);
      if (entry && now() - entry.at < maxAgeMs) return entry.secrets;
      const secrets = readSecrets(db, box, agentName);
      cached.set(agentName, { secrets, at: now() });
      // A failed read is not kept: the next run tries again.
      secrets.catch(() => cached.get(agentName)?.secrets === secrets && cached.delete(agentName));
      return secrets;
    },
    drop(agentName) {
      cached.delete(agentName);
    },
  };
}

async function readSecrets(db: Db, box: SecretBox, agentName: string): Promise<Readonly<Record<string, string>>> {
  const rows = await findAgentSecrets(db, agentName);
  const secrets: Record<string, string> = {};
  for (const row of rows) secrets[row.key] = openSecret(box, agentName, row.key, row.sealed);
  return Object.freeze(secrets);
}
