import type { Queue } from 'bullmq';
import type { Config } from '../../shared/config.js';
import type { Clock } from '../../shared/clock.js';
import type { Logger } from '../../shared/logger.js';
import type { MailJobData } from '../../shared/mail-jobs.js';
import type { SecretBox } from '../../shared/secret-box.js';
import type { Db } from '../../db/database.js';
import type { Secrets } from '../../db/resolve-secrets.js';
import type { Mailer } from './mailer.js';

/** What the mail jobs depend on. */
export interface MailDeps {
  config: Config;
  db: Db;
  logger: Logger;
  box: SecretBox;
  clock: Clock;
  secrets: Secrets;
  mailer: Mailer;
  mailQueue: Queue<MailJobData>;
}
