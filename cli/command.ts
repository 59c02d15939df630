import type { ParseArgsConfig } from 'node:util';
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';
import type { Db } from '../db/database.js';

/** What every command is made of: its options, and a run that returns what to print. */

/** A failure the user caused (bad option, unknown name): printed without a stack. */
export class CommandError extends Error {
  override name = 'CommandError';
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
  options: NonNullable<ParseArgsConfig['options']>;
  run(context: CommandContext): Promise<CommandResult>;
}

export function required(context: CommandContext, name: string): string {
  const value = context.values[name];
  if (typeof value !== 'string' || !value.trim()) throw new CommandError(`--${name} is required`);
  return value.trim();
}

export function oneOf<T extends string>(context: CommandContext, name: string, allowed: readonly T[], fallback: T): T {
  const value = context.values[name] ?? fallback;
  if (!allowed.includes(value as T)) throw new CommandError(`--${name} must be one of: ${allowed.join(', ')}`);
  return value as T;
}

