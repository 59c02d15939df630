import { agentNamePattern } from '../shared/api.js';
import { maxSecretLength, maxSecretsPerAgent, sealSecret, secretKeyPattern, secretKeyRule, type SecretSet } from '../shared/agent-secrets.js';
import { invalidRequest } from '../shared/errors.js';
import type { ControlMessage } from '../shared/events.js';
import type { SecretBox } from '../shared/secret-box.js';
import type { Db } from '../db/database.js';
import { deleteAgentSecret, listAgentSecretKeys, upsertAgentSecret } from '../db/agent-secrets.repository.js';

/**
 * Setting and removing agent secrets (DESIGN §13), for the admin endpoints and the command line
 * alike: checked, sealed, stored, then announced on the control channel so every worker reads the
 * agent name's secrets again before its next run (the message names the agent, never a value or a
 * set: a worker drops both sets of the name). Each call names its set: production or drafts.
 */
export interface SecretChanges {
  db: Db;
  box: SecretBox;
  /** Publishes the control message (shared/events.ts `secrets`) that makes workers read them again. */
  announce(agentName: string): Promise<void>;
}

/** The control message announcing a change to an agent name's secrets. */
export function secretsChangedMessage(agentName: string): string {
  return JSON.stringify({ type: 'secrets', agentName } satisfies ControlMessage);
}

export async function setAgentSecret(deps: SecretChanges, agentName: string, set: SecretSet, key: string, value: string): Promise<void> {
  checkNames(agentName, key);
  if (value.length === 0 || value.length > maxSecretLength) throw invalidRequest({ value: `must be 1 to ${maxSecretLength} characters` });
  const keys = await listAgentSecretKeys(deps.db, agentName, set);
  if (!keys.includes(key) && keys.length >= maxSecretsPerAgent) {
    throw invalidRequest({ key: `${agentName} already has ${maxSecretsPerAgent} ${set} secrets, the most an agent may have in a set` });
  }
  await upsertAgentSecret(deps.db, agentName, set, key, sealSecret(deps.box, agentName, key, value, set));
  await deps.announce(agentName);
}

/** Answers whether the secret existed in that set. */
export async function removeAgentSecret(deps: SecretChanges, agentName: string, set: SecretSet, key: string): Promise<boolean> {
  checkNames(agentName, key);
  const removed = await deleteAgentSecret(deps.db, agentName, set, key);
  if (removed) await deps.announce(agentName);
  return removed;
}

export function agentSecretKeys(db: Db, agentName: string, set: SecretSet): Promise<string[]> {
  if (!agentNamePattern.test(agentName)) throw invalidRequest({ agentName: 'must be an agent name' });
  return listAgentSecretKeys(db, agentName, set);
}

function checkNames(agentName: string, key: string): void {
  const fields: Record<string, string> = {};
  if (!agentNamePattern.test(agentName)) fields.agentName = 'must be an agent name';
  if (!secretKeyPattern.test(key)) fields.key = secretKeyRule;
  if (Object.keys(fields).length) throw invalidRequest(fields);
}
