import { randomBytes } from 'node:crypto';
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';
import type { Db } from './database.js';
import { getOrCreateInstanceSecret } from './instance-secrets.repository.js';

export interface Secrets {
  sessionSecret: string;
  secretsKey: string;
}

/**
 * SESSION_SECRET and SECRETS_KEY from the configuration; outside production, a missing one is
 * generated once and kept in the database so every process of the set-up shares it (with a warning).
 */
export async function resolveSecrets(db: Db, config: Config, logger: Logger): Promise<Secrets> {
  const resolve = async (name: string, configured: string | undefined) => {
    if (configured) return configured;
    logger.warn(`${name} is not set: using a generated one stored in the database (set it in production)`);
    return getOrCreateInstanceSecret(db, name, randomBytes(32).toString('base64url'));
  };
  return {
    sessionSecret: await resolve('SESSION_SECRET', config.sessionSecret),
    secretsKey: await resolve('SECRETS_KEY', config.secretsKey),
  };
}
