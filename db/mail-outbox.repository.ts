import type { Db } from './database.js';
import type { MailKind } from '../shared/mail-messages.js';
import type { OutboxMail } from './schema.js';

export interface NewMail {
  kind: MailKind;
  to: string;
  subject: string;
  sealedBody: string;
  now: Date;
}

/** Queues a mail in the outbox (in the caller's transaction, with the change it reports); returns its id. */
export async function insertMail(db: Db, mail: NewMail): Promise<string> {
  const row = await db
    .insertInto('mail_outbox')
    .values({ kind: mail.kind, to_address: mail.to, subject: mail.subject, sealed_body: mail.sealedBody, created_at: mail.now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** The unsent mail with this id, locked so one sender at a time handles it; undefined once sent or taken. */
export async function takeUnsentMail(db: Db, id: string): Promise<OutboxMail | undefined> {
  return db.selectFrom('mail_outbox').selectAll().where('id', '=', id).where('sent_at', 'is', null).forUpdate().skipLocked().executeTakeFirst();
}

/** Marks a mail sent and forgets its text. */
export async function markMailSent(db: Db, id: string, now: Date): Promise<void> {
  await db
    .updateTable('mail_outbox')
    .set((eb) => ({ sent_at: now, sealed_body: '', attempts: eb('attempts', '+', 1), last_error: null }))
    .where('id', '=', id)
    .execute();
}

export async function recordMailFailure(db: Db, id: string, error: string): Promise<void> {
  await db
    .updateTable('mail_outbox')
    .set((eb) => ({ attempts: eb('attempts', '+', 1), last_error: error.slice(0, 500) }))
    .where('id', '=', id)
    .execute();
}

/** Ids of mails still unsent that were queued before `before` (their job may be gone: they are queued again). */
export async function findUnsentMailIds(db: Db, before: Date, limit = 500): Promise<string[]> {
  const rows = await db
    .selectFrom('mail_outbox')
    .select('id')
    .where('sent_at', 'is', null)
    .where('created_at', '<', before)
    .orderBy('created_at')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}
