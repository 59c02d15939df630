import { loadConfig } from '../shared/config.js';
import { createLogger } from '../shared/logger.js';
import { createDb, ensureDatabase, migrateToLatest, type Db } from '../db/database.js';
import { CommandError, UsageError, type Command, type CommandContext } from './command.js';
import { commands } from './commands.js';
import { asksForHelp, formatCommandList, formatCommandUsage, parseCommandLine } from './usage.js';

/**
 * `npm run cli -- <command> [options] [--json]` (DESIGN §8). Prints a readable summary, or one JSON
 * object on stdout with --json. Exits 1 with a message on stderr when a command fails, and with the
 * command's usage too when its command line is wrong; `--help` prints the usage and exits 0.
 */
async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || (name === 'help' && !rest[0])) return print(formatCommandList(commands));
  if (name === 'help') return main([rest[0]!, '--help']);
  const command = commands[name];
  if (!command) {
    process.stderr.write(`unknown command "${name}"\n\n${formatCommandList(commands)}\n`);
    return 1;
  }
  if (asksForHelp(rest)) return print(formatCommandUsage(name, command));
  try {
    return await runCommand(name, command, rest);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${name}: ${err.message}\n\n${formatCommandUsage(name, command)}\n`);
    return 1;
  }
}

function print(text: string): number {
  process.stdout.write(`${text}\n`);
  return 0;
}

async function runCommand(name: string, command: Command, args: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine(command, args);
  const config = loadConfig();
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, process.stderr as never);
  await ensureDatabase(config.databaseUrl);
  const db: Db = createDb(config.databaseUrl, 2);
  try {
    if (name !== 'migrate') await migrateToLatest(db);
    const context: CommandContext = { config, db, logger, values, positionals };
    const result = await command.run(context);
    process.stdout.write(values.json ? `${JSON.stringify(result.json)}\n` : `${result.text}\n`);
    for (const warning of result.warnings ?? []) process.stderr.write(`warning: ${warning}\n`);
    return result.exitCode ?? 0;
  } finally {
    await db.destroy();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${err instanceof CommandError || (err as Error).name === 'ConfigError' || err instanceof TypeError ? (err as Error).message : String((err as Error).stack ?? err)}\n`);
    process.exit(1);
  },
);
