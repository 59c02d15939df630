import { controlChannel } from '../shared/channels.js';
import { createSecretBox } from '../shared/secret-box.js';
import { resolveSecrets } from '../db/resolve-secrets.js';
import { agentSecretKeys, removeAgentSecret, secretsChangedMessage, setAgentSecret, type SecretChanges } from '../runs/agent-secrets.js';
import type { SecretSet } from '../shared/agent-secrets.js';
import { AppError } from '../shared/errors.js';
import { CommandError, required, type Command, type CommandContext } from './command.js';
import { publishOnce } from './service-account-changes.js';

/**
 * The agent secrets commands (DESIGN §13). The value of `secrets:set` comes from standard input, never
 * an argument. `--drafts` sets or deletes one of the secrets only the agent name's drafts read;
 * without it, one of those its published versions read. `secrets:list` shows both sets.
 */

const agentOption = { agent: { type: 'string', value: 'NAME', description: 'the agent name (required)' } } as const;
const names = {
  ...agentOption,
  key: { type: 'string', value: 'KEY', description: 'the secret\'s name, as its runs read it: sys.secrets.KEY (required)' },
  drafts: { type: 'boolean', description: 'the secret only the agent name\'s drafts read' },
} as const;

/** The set `--drafts` names, and how the printed line says it. */
function chosenSet(context: CommandContext): { set: SecretSet; forWhom: string } {
  return context.values.drafts === true ? { set: 'drafts', forWhom: ' for drafts' } : { set: 'production', forWhom: '' };
}

export const setSecret: Command = {
  description: 'sets a secret of an agent name from standard input (printf %s "$VALUE" | npm run cli -- secrets:set ...)',
  options: names,
  async run(context) {
    const agentName = required(context, 'agent');
    const key = required(context, 'key');
    const { set, forWhom } = chosenSet(context);
    const value = (await readStandardInput()).replace(/\r?\n$/, '');
    if (!value) throw new CommandError('secrets:set reads the value from standard input, and it was empty (e.g. printf %s "$KEY" | npm run cli -- secrets:set …)');
    const { changes, warnings } = await secretChanges(context);
    await checked(() => setAgentSecret(changes, agentName, set, key, value));
    return { text: `secret ${key} of ${agentName} set${forWhom}`, json: { agentName, key, forDrafts: set === 'drafts' }, warnings };
  },
};

export const deleteSecret: Command = {
  description: 'deletes a secret of an agent name',
  options: names,
  async run(context) {
    const agentName = required(context, 'agent');
    const key = required(context, 'key');
    const { set, forWhom } = chosenSet(context);
    const { changes, warnings } = await secretChanges(context);
    if (!(await checked(() => removeAgentSecret(changes, agentName, set, key)))) throw new CommandError(`${agentName} has no secret ${key}${forWhom}`);
    return { text: `secret ${key} of ${agentName} deleted${forWhom}`, json: { agentName, key, forDrafts: set === 'drafts' }, warnings };
  },
};

export const listSecrets: Command = {
  description: 'lists the names (never the values) of an agent name\'s secrets, production and drafts',
  options: agentOption,
  async run(context) {
    const agentName = required(context, 'agent');
    const keys = await checked(() => agentSecretKeys(context.db, agentName, 'production'));
    const draftKeys = await agentSecretKeys(context.db, agentName, 'drafts');
    const lines = [...keys.map((key) => `${key} (production)`), ...draftKeys.map((key) => `${key} (drafts)`)];
    return { text: lines.length ? lines.join('\n') : `${agentName} has no secrets`, json: { agentName, keys, draftKeys } };
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
