import type { ThrownDescription } from '../sandbox-protocol.js';
import { isFetchError } from './host.js';
import { builtinErrors, RealError, toJson } from './intrinsics.js';

/** A value as one piece of a log line: strings as they are, errors by their stack, the rest as JSON. */
export function describeValue(value: unknown): string {
  try {
    if (typeof value === 'string') return value;
    if (value instanceof RealError) return typeof value.stack === 'string' ? value.stack : String(value);
    const text = toJson(value) as string | undefined;
    return text === undefined ? String(value) : text;
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** The line sys.log and console.* write: their arguments described and joined by spaces. */
export function formatLine(args: unknown[]): string {
  return args.map(describeValue).join(' ');
}

/** What the agent threw, for the host to classify (error-codes.ts). Never throws itself. */
export function describeThrown(err: unknown): ThrownDescription {
  try {
    if (isFetchError(err)) {
      return { kind: 'fetch', name: 'FetchError', message: String(err.message), stack: String(err.stack) };
    }
    if (err instanceof RealError) {
      const stack = typeof err.stack === 'string' ? err.stack : '';
      // isolated-vm rejects import() with a plain Error('Not supported'); that is the agent's mistake.
      if (Object.getPrototypeOf(err) === RealError.prototype && err.message === 'Not supported') {
        return { kind: 'agent', name: '', message: 'import() is not available in agents', stack };
      }
      const builtin = builtinErrors.some((type) => err instanceof type);
      return { kind: builtin ? 'builtin' : 'other', name: String(err.name), message: String(err.message), stack };
    }
    return { kind: 'other', name: '', message: describeValue(err), stack: '' };
  } catch {
    return { kind: 'other', name: '', message: 'the agent threw a value that cannot be described', stack: '' };
  }
}
