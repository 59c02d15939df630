import { parseArgs } from 'node:util';
import { loadConfig } from '../shared/config.js';
import { createLogger } from '../shared/logger.js';
import { createDb, ensureDatabase, migrateToLatest, type Db } from '../db/database.js';
import { CommandError, type CommandContext } from './command.js';
import { commands } from './commands.js';

/**
 * `npm run cli -- <command> [options] [--json]` (DESIGN §8). Prints a readable summary, or one JSON
 * object on stdout with --json. Exits 1 with a message on stderr when a command fails.
 */
async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const command = name ? commands[name] : undefined;
  if (!command) {
    process.stderr.write(`Usage: npm run cli -- <command> [--json]\nCommands: ${Object.keys(commands).join(', ')}\n`);
    return name ? 1 : 0;
  }
  const { values, positionals } = parseArgs({ args: rest, options: { ...command.options, json: { type: 'boolean' } }, allowPositionals: true, strict: true });
  const config = loadConfig();
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, process.stderr as never);
  await ensureDatabase(config.databaseUrl);
  const db: Db = createDb(config.databaseUrl, 2);
  try {
    if (name !== 'migrate') await migrateToLatest(db);
    const context: CommandContext = { config, db, logger, values: values as Record<string, string | boolean | undefined>, positionals };
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
