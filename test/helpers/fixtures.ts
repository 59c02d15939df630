import { randomBytes, randomUUID } from 'node:crypto';
import type { Plan, Role } from '../../shared/api.js';
import { compileAgent } from '../../shared/compile-agent.js';
import { hashPassword } from '../../shared/password-hash.js';
import { generateServiceAccountKey } from '../../shared/service-account-key.js';
import type { Db } from '../../db/database.js';
import type { NewExecution } from '../../db/schema.js';
import { insertAgentVersion } from '../../db/agents.repository.js';
import { insertServiceAccount } from '../../db/service-accounts.repository.js';
import { insertUser } from '../../db/users.repository.js';
import { announceServiceAccountChange } from '../../cli/service-account-changes.js';
import { testEnv } from './test-env.js';

/** A new service account with a unique name; returns its key. */
export async function createAccount(db: Db, role: Role = 'user', plan: Plan = 'free'): Promise<{ name: string; key: string; id: string }> {
  const name = `test-${randomBytes(6).toString('hex')}`;
  const key = generateServiceAccountKey();
  const account = await insertServiceAccount(db, { name, role, plan, keyId: key.keyId, keyHash: key.secretHash });
  return { name, key: key.key, id: account!.id };
}

/**
 * Changes an account's role the way an operator must: in the database, then announced, so web
 * processes drop the account they cached (on this run's queue prefix).
 */
export async function changeAccountRole(db: Db, id: string, role: Role): Promise<void> {
  await db.updateTable('service_accounts').set({ role }).where('id', '=', id).execute();
  const warning = await announceServiceAccountChange({ redisUrl: testEnv.REDIS_URL!, redisCluster: false, queuePrefix: testEnv.QUEUE_PREFIX! }, id);
  if (warning) throw new Error(warning);
}

/** Publishes an agent from source; returns its version. */
export async function publishAgent(db: Db, name: string, source: string): Promise<number> {
  const compiled = await compileAgent(source);
  if (!compiled.ok) throw new Error(`test agent ${name} does not compile: ${JSON.stringify(compiled.errors)}`);
  return insertAgentVersion(db, name, { source, code: compiled.code, sourceMap: compiled.sourceMap });
}

/** A unique agent name, so suites sharing the database never see each other's agents. */
export function uniqueAgentName(base: string): string {
  return `${base}-${randomBytes(4).toString('hex')}`;
}

/** A good password (long, uncommon) that no other test uses. */
export function strongPassword(): string {
  return `correct horse ${randomBytes(6).toString('hex')} staple`;
}

/** A new user with a unique address; with `password`, that password is set (hashed as the server does). */
export async function createUser(
  db: Db,
  options: { password?: string; role?: Role; plan?: Plan } = {},
): Promise<{ id: string; email: string }> {
  const email = `user-${randomBytes(6).toString('hex')}@example.test`;
  const passwordHash = options.password ? await hashPassword(options.password) : null;
  const user = await insertUser(db, { email, callName: 'Test User', role: options.role ?? 'user', plan: options.plan ?? 'free', passwordHash });
  return { id: user!.id, email };
}

/** The execution record of a successful run `id` of agent "counter" (version 1) on `convid`, for tests that write commits directly. */
export function successRecord(convid: string, id: string = randomUUID(), principalId: string = randomUUID(), now = new Date()): NewExecution {
  return {
    id,
    convid,
    agent_name: 'counter',
    agent_version: 1,
    draft_id: null,
    principal_kind: 'serviceAccount',
    principal_id: principalId,
    request_id: id,
    result_code: 'success',
    error_message: null,
    response: '{}',
    started_at: now,
    finished_at: now,
    duration_ms: 0,
  };
}
