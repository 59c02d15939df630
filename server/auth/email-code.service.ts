import { AppError } from '../../shared/errors.js';
import { hashEmailCode } from '../../shared/email-code.js';
import { queueIssueCode, queueSend } from '../../shared/mail-jobs.js';
import { passwordChangedMessage } from '../../shared/mail-messages.js';
import { hashPassword } from '../../shared/password-hash.js';
import { failedPasswordRules } from '../../shared/password-rules.js';
import { recordWrongCode, useEmailCode } from '../../db/email-codes.repository.js';
import { insertMail } from '../../db/mail-outbox.repository.js';
import { deleteUserSessions } from '../../db/sessions.repository.js';
import { findUserByEmail, setPasswordHash } from '../../db/users.repository.js';
import type { WebDeps } from '../deps.js';
import { clearLoginFailures, releaseCodeMailSlot, takeCodeMailSlot } from './sign-in-limits.js';

/**
 * Asks for a one-time code for an address. The same work is done whether or not it belongs to a user:
 * a mail job is queued, and the job finds out. At most one per address per minute: a second ask
 * within the minute is refused 429 `rateLimited` with the seconds left (the caller is told the truth,
 * and the first code still works); that tells nothing about the address either, as every address
 * is counted alike.
 */
export async function requestEmailCode(deps: WebDeps, email: string, ip: string): Promise<void> {
  const { redis, config } = deps;
  const slot = await takeCodeMailSlot(redis, config.queuePrefix, email, deps.clock.now());
  if (!slot.allowed) {
    deps.logger.info({ event: 'emailCode', outcome: 'throttled', email, ip }, 'code not sent: one was asked for in the last minute');
    const wait = slot.retryAfterSeconds;
    throw new AppError(
      'rateLimited',
      `A code for this address was asked for less than a minute ago, and codes are mailed at most once a minute: use the code already sent, or ask again in ${wait} s.`,
      { retryAfterSeconds: wait },
    );
  }
  try {
    await queueIssueCode(deps.mailQueue, email);
  } catch (err) {
    await releaseCodeMailSlot(redis, config.queuePrefix, email).catch(() => undefined);
    throw err;
  }
  deps.logger.info({ event: 'emailCode', outcome: 'queued', email, ip }, 'code requested');
}

export interface NewPasswordRequest {
  email: string;
  code: string;
  password: string;
  ip: string;
}

const invalidCode = () => new AppError('invalidCode', 'The code is not valid: it may be wrong, used or expired. Ask for a new code.');

/** Stands in for the user of an address that has none: its code goes through the same statements and matches no row. */
const noUserId = '00000000-0000-0000-0000-000000000000';

/**
 * Sets a user's password (the first one, or a reset) with a code mailed to them. The password rules
 * are checked first (a refused password leaves the code usable); then the code is used up atomically,
 * the new hash stored, every session of the user ended, and a "password changed" mail queued.
 * Until the code is found good, an unknown address, a user without a code and a wrong, used or expired
 * code all do the same work (one lookup, one HMAC, the same two statements) and get the same answer,
 * so neither the answer nor its time tells who has an account.
 */
export async function createPasswordWithEmailCode(deps: WebDeps, request: NewPasswordRequest): Promise<void> {
  const failed = failedPasswordRules(request.password, request.email);
  if (failed.length) {
    throw new AppError('passwordRules', 'The password does not meet the rules.', { rules: failed });
  }
  const now = deps.clock.now();
  const user = await findUserByEmail(deps.db, request.email);
  const attempt = { userId: user?.id ?? noUserId, email: user?.email ?? request.email, now };
  const codeHash = hashEmailCode(deps.secrets.secretsKey, { ...attempt, code: request.code });
  const used = await useEmailCode(deps.db, { ...attempt, codeHash });
  if (!used || !user) {
    await recordWrongCode(deps.db, { ...attempt, codeHash });
    deps.logger.warn({ event: 'passwordReset', outcome: 'failure', reason: 'invalidCode', email: request.email, userId: user?.id, ip: request.ip }, 'password not set: code refused');
    throw invalidCode();
  }
  const passwordHash = await hashPassword(request.password);
  const message = passwordChangedMessage();
  const outboxId = await deps.db.transaction().execute(async (trx) => {
    await setPasswordHash(trx, user.id, passwordHash, now);
    await deleteUserSessions(trx, user.id);
    return insertMail(trx, { kind: message.kind, to: user.email, subject: message.subject, sealedBody: deps.box.seal(message.text), now });
  });
  deps.logger.info({ event: 'passwordReset', outcome: 'success', userId: user.id, ip: request.ip }, 'password set; every session ended');
  await clearLoginFailures(deps.redis, deps.config.queuePrefix, user.email).catch(() => undefined);
  // Not queued now (Redis down): the outbox sweep sends it within minutes.
  await queueSend(deps.mailQueue, outboxId).catch((err) => deps.logger.warn({ err: String(err), outboxId }, 'mail not queued; the sweep will'));
}
