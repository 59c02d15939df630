import { queueSend } from '../../shared/mail-jobs.js';
import { findUnsentMailIds, markMailSent, recordMailFailure, takeUnsentMail } from '../../db/mail-outbox.repository.js';
import type { MailDeps } from './mail-deps.js';

/** How long an unsent mail waits before the sweep queues it again (its send job gave up or was lost). */
export const sweepAfterMs = 60_000;

/**
 * Sends one outbox mail, holding its row locked meanwhile so no other sender takes it. Marked sent
 * (and its text forgotten) in the same transaction; a failed send is recorded and thrown, so its job
 * retries with backoff. A mail already sent is skipped.
 */
export async function deliverMail(deps: MailDeps, outboxId: string): Promise<void> {
  const failure = await deps.db.transaction().execute(async (trx) => {
    const mail = await takeUnsentMail(trx, outboxId);
    if (!mail) return undefined;
    try {
      await deps.mailer.send({ to: mail.to_address, subject: mail.subject, text: deps.box.open(mail.sealed_body) });
    } catch (err) {
      await recordMailFailure(trx, mail.id, err instanceof Error ? err.message : String(err));
      return err;
    }
    await markMailSent(trx, mail.id, deps.clock.now());
    deps.logger.info({ event: 'mail', outcome: 'sent', outboxId: mail.id, kind: mail.kind }, 'mail sent');
    return undefined;
  });
  if (failure) {
    deps.logger.warn({ event: 'mail', outcome: 'failed', outboxId, err: String(failure) }, 'mail not sent; will retry');
    throw failure;
  }
}

/** Queues again every mail left unsent for a while (a queued or retrying one keeps its job: same job id). */
export async function sweepOutbox(deps: MailDeps): Promise<number> {
  const ids = await findUnsentMailIds(deps.db, new Date(deps.clock.now().getTime() - sweepAfterMs));
  for (const id of ids) await queueSend(deps.mailQueue, id);
  return ids.length;
}
