import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Header and field names whose values are secrets; pino replaces them before a line is written.
 * Code never logs request bodies; this list is the second line of defence.
 */
const redactPaths = [
  'password',
  '*.password',
  'key',
  '*.key',
  'secret',
  '*.secret',
  'token',
  '*.token',
  'authorization',
  '*.authorization',
  'cookie',
  '*.cookie',
  'headers.authorization',
  'headers.cookie',
  'answers',
  '*.answers',
];

/** A JSON logger; `destination` lets tests capture lines. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: redactPaths, censor: '[redacted]' }, base: { pid: process.pid } }, destination);
}
