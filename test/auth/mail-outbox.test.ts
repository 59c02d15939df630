import assert from 'node:assert/strict';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { mailQueueName, type MailJobData } from '../../shared/mail-jobs.js';
import { insertMail } from '../../db/mail-outbox.repository.js';
import { sweepOutbox } from '../../workers/mail/deliver-mail.js';
import { createMailer } from '../../workers/mail/mailer.js';
import { createBrowser } from '../helpers/browser.js';
import { createUser, strongPassword } from '../helpers/fixtures.js';
import { waitForQueueIdle } from '../helpers/queue-idle.js';
import type { TestSmtp } from '../helpers/smtp.js';
import { startStackWithMail, type MailStack } from '../helpers/stack.js';
import { waitFor } from '../helpers/wait.js';

describe('mail outbox', function () {
  let smtp: TestSmtp;
  let stack: MailStack;

  before(async () => {
    stack = await startStackWithMail();
    smtp = stack.smtp;
  });
  after(() => stack.close());

  const outboxRows = (email: string) => stack.runtime.db.selectFrom('mail_outbox').selectAll().where('to_address', '=', email).execute();

  it('loses nothing while SMTP is down, and sends the mail when it is back', async () => {
    const user = await createUser(stack.runtime.db);
    await smtp.stop();
    try {
      assert.equal((await createBrowser(stack.url).post('/api/auth/emailCode', { email: user.email })).status, 200);
      await waitFor(async () => (await outboxRows(user.email)).some((m) => m.attempts >= 2), 10_000, 'two failed attempts');
      const [waiting] = await outboxRows(user.email);
      assert.equal(waiting!.sent_at, null);
      assert.ok(waiting!.last_error);
      assert.equal(smtp.mailsTo(user.email).length, 0);
    } finally {
      await smtp.start();
    }
    const code = await smtp.waitForCode(user.email, 1);
    await waitFor(async () => (await outboxRows(user.email))[0]!.sent_at !== null, 5000, 'the mail marked sent');
    const [sent] = await outboxRows(user.email);
    assert.equal(sent!.sealed_body, '', 'the text is forgotten once sent');
    const set = await createBrowser(stack.url).post('/api/auth/createPasswordWithEmailCode', { email: user.email, code, password: strongPassword() });
    assert.equal(set.status, 200, 'the delayed code still works');
  });

  it('the sweep queues again a mail whose job is gone, and it is sent once', async () => {
    const user = await createUser(stack.runtime.db);
    const queued = new Date(Date.now() - 5 * 60_000);
    const id = await insertMail(stack.runtime.db, { kind: 'passwordChanged', to: user.email, subject: 'left behind', sealedBody: stack.runtime.box.seal('hello'), now: queued });
    const connection = new Redis(stack.config.redisUrl, { maxRetriesPerRequest: null });
    const mailQueue = new Queue<MailJobData>(mailQueueName, { connection, prefix: stack.config.queuePrefix });
    try {
      const deps = { ...stack.runtime, mailQueue, mailer: createMailer(stack.config) };
      assert.ok((await sweepOutbox(deps)) >= 1);
      await sweepOutbox(deps);
      const mail = await smtp.waitForMail(user.email);
      assert.equal(mail.subject, 'left behind');
      await waitFor(async () => (await outboxRows(user.email))[0]!.sent_at !== null, 5000, 'marked sent');
      await waitForQueueIdle(stack.config, mailQueueName); // both send jobs ended
      assert.equal(smtp.mailsTo(user.email).length, 1, 'sent once');
      assert.equal((await outboxRows(user.email))[0]!.id, id);
    } finally {
      await mailQueue.close();
      connection.disconnect();
    }
  });
});
