import nodemailer from 'nodemailer';
import type { Config } from '../../shared/config.js';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
}

/** Sends mail: over SMTP (SMTP_URL), or, in development without SMTP_URL, by printing it. */
export interface Mailer {
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

export function createMailer(config: Pick<Config, 'smtpUrl' | 'mailFrom'>, print: (text: string) => void = (t) => process.stderr.write(t)): Mailer {
  if (!config.smtpUrl) return printingMailer(print);
  // One connection, reused while mail keeps coming; a failed send is retried by its job.
  const transport = nodemailer.createTransport(config.smtpUrl, { from: config.mailFrom });
  return {
    async send(mail) {
      await transport.sendMail({ to: mail.to, subject: mail.subject, text: mail.text });
    },
    close: () => transport.close(),
  };
}

/**
 * The development mailer: the mail goes to stderr as plain text, not into the JSON log (codes never
 * reach a log line). Start-up refuses it in production (config.ts requires SMTP_URL there).
 */
function printingMailer(print: (text: string) => void): Mailer {
  return {
    async send(mail) {
      print(`\n--- mail (development mailer: set SMTP_URL to send) ---\nTo: ${mail.to}\nSubject: ${mail.subject}\n\n${mail.text}\n--- end of mail ---\n`);
    },
    close: () => undefined,
  };
}
