import { systemClock, type Clock } from '../shared/clock.js';
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';
import { createSecretBox, type SecretBox } from '../shared/secret-box.js';
import { createDb, type Db } from './database.js';
import { resolveSecrets, type Secrets } from './resolve-secrets.js';

/** What every process (web, worker, CLI) has once it reached the database. */
export interface Runtime {
  config: Config;
  logger: Logger;
  db: Db;
  box: SecretBox;
  clock: Clock;
  secrets: Secrets;
}

/** Opens the database pool and resolves the secrets. */
export async function openRuntime(config: Config, logger: Logger, maxConnections = 10): Promise<Runtime> {
  const db = createDb(config.databaseUrl, maxConnections, { lockTimeoutMs: config.convWaitMs, preparedStatements: config.databasePreparedStatements });
  const secrets = await resolveSecrets(db, config, logger);
  return { config, logger, db, secrets, box: createSecretBox(secrets.secretsKey), clock: systemClock };
}
