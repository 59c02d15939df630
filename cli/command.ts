import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';
import type { Db } from '../db/database.js';

/** What every command is made of: a description, its options, and a run that returns what to print. */

/** A failure the user caused (bad option, unknown name): printed without a stack. */
export class CommandError extends Error {
  override name = 'CommandError';
}

/** A command line the command cannot take (unknown option, missing value or option): printed with its usage. */
export class UsageError extends CommandError {
  override name = 'UsageError';
}

/** One `--option`: `string` takes a value (shown in the help as `value`, or the name in capitals). */
export interface CommandOption {
  type: 'string' | 'boolean';
  description: string;
  value?: string;
}

export interface CommandContext {
  config: Config;
  db: Db;
  logger: Logger;
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

export interface CommandResult {
  text: string;
  json: unknown;
  exitCode?: number;
  /** Printed on stderr (with --json too): the command did its work, but something around it failed. */
  warnings?: string[];
}

export interface Command {
  /** One line, for the command list and the top of its help. */
  description: string;
  /** The arguments it takes besides options, as its usage shows them (`FILE...`); none: it takes none. */
  positionals?: string;
  options: Record<string, CommandOption>;
  run(context: CommandContext): Promise<CommandResult>;
}

export function required(context: CommandContext, name: string): string {
  const value = context.values[name];
  if (typeof value !== 'string' || !value.trim()) throw new UsageError(`--${name} is required`);
  return value.trim();
}

export function oneOf<T extends string>(context: CommandContext, name: string, allowed: readonly T[], fallback: T): T {
  const value = context.values[name] ?? fallback;
  if (!allowed.includes(value as T)) throw new CommandError(`--${name} must be one of: ${allowed.join(', ')}`);
  return value as T;
}

