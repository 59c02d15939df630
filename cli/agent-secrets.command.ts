import { controlChannel } from '../shared/channels.js';
import { createSecretBox } from '../shared/secret-box.js';
import { resolveSecrets } from '../db/resolve-secrets.js';
import { agentSecretKeys, removeAgentSecret, secretsChangedMessage, setAgentSecret, type SecretChanges } from '../runs/agent-secrets.js';
import { AppError } from '../shared/errors.js';
import { CommandError, required, type Command, type CommandContext } from './command.js';
import { publishOnce } from './service-account-changes.js';

/** The agent secrets commands (DESIGN §13). The value of `secrets:set` comes from standard input, never an argument. */

const names = { agent: { type: 'string' }, key: { type: 'string' } } as const;

export const setSecret: Command = {
  options: names,
  async run(context) {
    const agentName = required(context, 'agent');
    const key = required(context, 'key');
    const value = (await readStandardInput()).replace(/\r?\n$/, '');
    if (!value) throw new CommandError('secrets:set reads the value from standard input, and it was empty (e.g. printf %s "$KEY" | npm run cli -- secrets:set …)');
    const { changes, warnings } = await secretChanges(context);
    await checked(() => setAgentSecret(changes, agentName, key, value));
    return { text: `secret ${key} of ${agentName} set`, json: { agentName, key }, warnings };
  },
};

export const deleteSecret: Command = {
  options: names,
  async run(context) {
    const agentName = required(context, 'agent');
    const key = required(context, 'key');
    const { changes, warnings } = await secretChanges(context);
    if (!(await checked(() => removeAgentSecret(changes, agentName, key)))) throw new CommandError(`${agentName} has no secret ${key}`);
    return { text: `secret ${key} of ${agentName} deleted`, json: { agentName, key }, warnings };
  },
};

export const listSecrets: Command = {
  options: { agent: { type: 'string' } },
  async run(context) {
    const agentName = required(context, 'agent');
    const keys = await checked(() => agentSecretKeys(context.db, agentName));
    return { text: keys.length ? keys.join('\n') : `${agentName} has no secrets`, json: { agentName, keys } };
  },
};

async function secretChanges(context: CommandContext): Promise<{ changes: SecretChanges; warnings: string[] }> {
  const { secretsKey } = await resolveSecrets(context.db, context.config, context.logger);
  const warnings: string[] = [];
  const changes: SecretChanges = {
    db: context.db,
    box: createSecretBox(secretsKey),
    async announce(agentName) {
      const failure = await publishOnce(context.config, controlChannel(context.config.queuePrefix), secretsChangedMessage(agentName));
      if (failure) warnings.push(`could not tell the workers through Redis (${failure}); they read the secrets again within 60 s`);
    },
  };
  return { changes, warnings };
}

/** A refusal of the runs layer (a bad name, too long a value) as the command's error. */
async function checked<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (err) {
    if (err instanceof AppError && err.code === 'invalidRequest') {
      const fields = (err.details?.fields ?? {}) as Record<string, string>;
      throw new CommandError(Object.entries(fields).map(([field, problem]) => `--${field === 'agentName' ? 'agent' : field} ${problem}`).join('\n') || err.message);
    }
    throw err;
  }
}

async function readStandardInput(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('value (end with Ctrl-D): ');
  let text = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) text += chunk as string;
  return text;
}
