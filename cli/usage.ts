import { parseArgs } from 'node:util';
import { UsageError, type Command, type CommandOption } from './command.js';

/** The command line's help (DESIGN §8): the command list, each command's usage, and its parse errors as one line. */

/** Options every command takes. */
const commonOptions: Record<string, CommandOption> = {
  json: { type: 'boolean', description: 'print one JSON object on stdout instead of text' },
  help: { type: 'boolean', description: 'print this help and exit' },
};

export function formatCommandList(commands: Record<string, Command>): string {
  const width = Math.max(...Object.keys(commands).map((name) => name.length));
  const lines = Object.entries(commands).map(([name, command]) => `  ${name.padEnd(width)}  ${command.description}`);
  return ['Usage: npm run cli -- <command> [options] [--json]', '', 'Commands:', ...lines, '', 'npm run cli -- <command> --help shows the options of a command.'].join('\n');
}

export function formatCommandUsage(name: string, command: Command): string {
  const options = Object.entries({ ...command.options, ...commonOptions }).map(([option, spec]) => [`--${option}${spec.type === 'string' ? ` ${spec.value ?? option.toUpperCase()}` : ''}`, spec.description] as const);
  const width = Math.max(...options.map(([flag]) => flag.length));
  return [
    `Usage: npm run cli -- ${name} [options]${command.positionals ? ` ${command.positionals}` : ''}`,
    '',
    command.description,
    '',
    'Options:',
    ...options.map(([flag, description]) => `  ${flag.padEnd(width)}  ${description}`),
  ].join('\n');
}

/** `--help` or `-h` anywhere before a `--` (after it, they are arguments). */
export function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

/** The command's options and arguments; a UsageError naming the option when parseArgs refuses them. */
export function parseCommandLine(command: Command, args: string[]): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  const options = Object.fromEntries(Object.entries({ ...command.options, ...commonOptions }).map(([name, spec]) => [name, { type: spec.type }]));
  try {
    return parseArgs({ args, options, allowPositionals: command.positionals !== undefined, strict: true });
  } catch (err) {
    throw usageErrorOf(err);
  }
}

/** parseArgs's errors (ERR_PARSE_ARGS_*) as one line; the option is the first quoted word of its message. */
function usageErrorOf(err: unknown): unknown {
  const code = (err as { code?: string }).code;
  const message = err instanceof Error ? err.message : '';
  const quoted = /'([^' ]+)/.exec(message)?.[1] ?? '';
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return new UsageError(`unknown option ${quoted}`);
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') return new UsageError(`unexpected argument ${quoted} (this command takes options only)`);
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    return new UsageError(message.includes('does not take an argument') ? `${quoted} takes no value` : `${quoted} needs a value`);
  }
  return err;
}
