import type { ThrownDescription } from './sandbox-protocol.js';
import type { SandboxError } from './sandbox.types.js';

export type { ThrownDescription } from './sandbox-protocol.js';

/** File name the agent's compiled code runs under inside the isolate; stack frames are located by it. */
export const agentFileName = 'agent.js';

/** A bad argument to a sys function; raised in the agent as a TypeError (so uncaught → errorInAgent). */
export class AgentTypeError extends Error {
  override name = 'AgentTypeError';
}

/** A mistake detected on the host that ends the run with errorInAgent (divergence, output or variables too large). */
export class AgentFault extends Error {
  override name = 'AgentFault';
}

/** Line and column of the innermost stack frame in the agent's compiled code (1-based, as V8 prints them). */
export function locateInAgent(stack: string): { line?: number; column?: number } {
  const match = /\bagent\.js:(\d+):(\d+)/.exec(stack);
  return match ? { line: Number(match[1]), column: Number(match[2]) } : {};
}

/**
 * Built-in errors the spec counts as a bug in the agent (errorInAgent). URIError and EvalError are
 * included: they are thrown by built-ins just like the four the spec names.
 */
export const builtinErrorNames: readonly string[] = [
  'TypeError',
  'ReferenceError',
  'SyntaxError',
  'RangeError',
  'URIError',
  'EvalError',
];

/**
 * Describes an error isolated-vm copied out of the isolate (a throw while the agent's module code ran
 * at top level). isolated-vm recreates built-in error types, so the name is reliable enough here.
 */
export function describeCopiedError(err: unknown): ThrownDescription {
  if (err instanceof Error) {
    const kind = builtinErrorNames.includes(err.name) ? 'builtin' : 'other';
    return { kind, name: err.name, message: err.message, stack: err.stack ?? '' };
  }
  return { kind: 'other', name: '', message: describeValue(err), stack: '' };
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Longest error message a run keeps and returns, in code points, the closing `…` included (DESIGN §12). */
export const maxErrorMessageChars = 2000;

/**
 * The ending with its error message cut to maxErrorMessageChars. The stack's first line repeats the
 * message, so it is cut the same way and its frames are kept.
 */
export function limitError<E extends object>(ending: E): E {
  if (!('error' in ending)) return ending;
  const error = ending.error as SandboxError;
  const message = cutText(error.message, maxErrorMessageChars);
  const stack = error.stack === undefined ? undefined : cutStackHeader(error.stack);
  if (message === error.message && stack === error.stack) return ending;
  return { ...ending, error: { ...error, message, ...(stack === undefined ? {} : { stack }) } };
}

/** The ending with its error's message and stack masked by `mask` (the run's secrets, shared/agent-secrets.ts). */
export function maskError<E extends object>(ending: E, mask: (text: string) => string): E {
  if (!('error' in ending)) return ending;
  const error = ending.error as SandboxError;
  return { ...ending, error: { ...error, message: mask(error.message), ...(error.stack === undefined ? {} : { stack: mask(error.stack) }) } };
}

/** `text` cut to at most `max` code points, ending with `…` when cut; surrogate pairs are never split. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = 0;
  for (let points = 0; points < max - 1 && end < text.length; points++) {
    end += text.codePointAt(end)! > 0xffff ? 2 : 1;
  }
  // Exactly `max` code points fit whole.
  if (end >= text.length || end + (text.codePointAt(end)! > 0xffff ? 2 : 1) >= text.length) return text;
  return `${text.slice(0, end)}…`;
}

function cutStackHeader(stack: string): string {
  const frames = stack.search(/\n\s+at /);
  if (frames < 0) return cutText(stack, maxErrorMessageChars);
  return cutText(stack.slice(0, frames), maxErrorMessageChars) + cutText(stack.slice(frames), 20 * maxErrorMessageChars);
}
