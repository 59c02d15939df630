import { emailCodeMessage } from '../../shared/mail-messages.js';
import { generateEmailCode, hashEmailCode } from '../../shared/email-code.js';
import { queueSend } from '../../shared/mail-jobs.js';
import { forgetOldCodeFailures, replaceEmailCode } from '../../db/email-codes.repository.js';
import { insertMail } from '../../db/mail-outbox.repository.js';
import { findUserByEmail } from '../../db/users.repository.js';
import type { MailDeps } from './mail-deps.js';

/**
 * Makes a new one-time code for the user with this address (replacing any older code) and puts its
 * mail in the outbox, in one transaction; then queues the mail. An address that belongs to no user
 * gets nothing: its caller was answered exactly as if it did.
 */
export async function issueEmailCode(deps: MailDeps, email: string): Promise<void> {
  const user = await findUserByEmail(deps.db, email);
  if (!user) {
    deps.logger.info({ event: 'emailCode', outcome: 'noSuchUser', email }, 'code not sent: the address belongs to no user');
    return;
  }
  const code = generateEmailCode();
  const now = deps.clock.now();
  const message = emailCodeMessage(code, deps.config.emailCodeMinutes);
  const outboxId = await deps.db.transaction().execute(async (trx) => {
    await replaceEmailCode(trx, {
      userId: user.id,
      email: user.email,
      codeHash: hashEmailCode(deps.secrets.secretsKey, { userId: user.id, email: user.email, code }),
      now,
      expiresAt: new Date(now.getTime() + deps.config.emailCodeMinutes * 60_000),
    });
    await forgetOldCodeFailures(trx, user.id, now);
    return insertMail(trx, { kind: message.kind, to: user.email, subject: message.subject, sealedBody: deps.box.seal(message.text), now });
  });
  deps.logger.info({ event: 'emailCode', outcome: 'issued', userId: user.id, outboxId }, 'one-time code issued');
  await queueSend(deps.mailQueue, outboxId);
}
