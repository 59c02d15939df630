import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { waitFor } from './wait.js';

export interface ReceivedMail {
  to: string[];
  subject: string;
  /** The whole message as received (headers and body). */
  raw: string;
}

/** A real SMTP server for tests: receives what the service sends; can be stopped and started on the same port. */
export interface TestSmtp {
  url: string;
  mails: ReceivedMail[];
  /** Mails to one address (lower-cased compare). */
  mailsTo(address: string): ReceivedMail[];
  /** Waits for the `n`-th mail (1-based) to an address and returns it. */
  waitForMail(address: string, n?: number, timeoutMs?: number): Promise<ReceivedMail>;
  /** The one-time codes mailed to an address so far, in order. */
  codesTo(address: string): string[];
  /** Waits for the `n`-th code (1-based) mailed to an address. */
  waitForCode(address: string, n?: number): Promise<string>;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startTestSmtp(): Promise<TestSmtp> {
  const mails: ReceivedMail[] = [];
  let port = 0;
  let server: SMTPServer | undefined;

  const listen = async () => {
    server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          const subject = /^Subject: (.*)$/m.exec(raw)?.[1]?.trim() ?? '';
          mails.push({ to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()), subject, raw });
          callback();
        });
      },
    });
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(port, '127.0.0.1', () => resolve());
    });
    port = (server.server.address() as AddressInfo).port;
  };
  const stop = () => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await listen();

  const mailsTo = (address: string) => mails.filter((m) => m.to.includes(address.toLowerCase()));
  const codesTo = (address: string) => mailsTo(address).flatMap((m) => /one-time code is: (\d{6})/.exec(m.raw)?.[1] ?? []);
  const waitForMail = async (address: string, n = 1, timeoutMs = 10_000) => {
    await waitFor(() => mailsTo(address).length >= n, timeoutMs, `mail ${n} to ${address}`);
    return mailsTo(address)[n - 1]!;
  };
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    mailsTo,
    waitForMail,
    codesTo,
    async waitForCode(address, n = 1) {
      await waitFor(() => codesTo(address).length >= n, 10_000, `code ${n} to ${address}`);
      return codesTo(address)[n - 1]!;
    },
    stop,
    start: listen,
    close: stop,
  };
}
