import { createSecretBox } from '../shared/secret-box.js';
import { generateWebhookSecret } from '../shared/webhook-signature.js';
import { resolveSecrets } from '../db/resolve-secrets.js';
import { findServiceAccountByName } from '../db/service-accounts.repository.js';
import { deleteWebhook, findRecentAttempts, upsertWebhook } from '../db/webhooks.repository.js';
import { CommandError, required, type Command, type CommandContext } from './command.js';
import { formatTable } from './format-table.js';

/** Webhooks (DESIGN §14): one endpoint per service account, for the ends of its background runs. */

const accountOption = { name: { type: 'string', value: 'ACCOUNT', description: 'the service account (required)' } } as const;

export const setWebhook: Command = {
  description: 'gives a service account its webhook endpoint; prints {url, secret} (the signing secret is shown only here)',
  options: { ...accountOption, url: { type: 'string', value: 'URL', description: 'the http: or https: endpoint; it must pass WEBHOOK_ALLOW (required)' } },
  async run(context) {
    const account = await accountNamed(context);
    const url = required(context, 'url');
    if (!URL.canParse(url) || !['http:', 'https:'].includes(new URL(url).protocol)) throw new CommandError('--url must be an http: or https: URL');
    const secret = generateWebhookSecret();
    const { secretsKey } = await resolveSecrets(context.db, context.config, context.logger);
    await upsertWebhook(context.db, account.id, new URL(url).href, createSecretBox(secretsKey).seal(secret));
    const text = `webhook of ${account.name}: ${new URL(url).href}\nsigning secret (shown once): ${secret}`;
    return { text, json: { url: new URL(url).href, secret } };
  },
};

export const removeWebhook: Command = {
  description: 'removes a service account\'s webhook endpoint',
  options: accountOption,
  async run(context) {
    const account = await accountNamed(context);
    if (!(await deleteWebhook(context.db, account.id))) throw new CommandError(`${account.name} has no webhook`);
    return { text: `webhook of ${account.name} deleted`, json: { name: account.name } };
  },
};

export const webhookDeliveries: Command = {
  description: 'lists a service account\'s latest webhook delivery attempts, each with its outcome',
  options: { ...accountOption, limit: { type: 'string', value: 'N', description: 'how many attempts, newest first (1 to 1000, default 50)' } },
  async run(context) {
    const account = await accountNamed(context);
    const limit = Number(context.values.limit ?? 50);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new CommandError('--limit must be a whole number from 1 to 1000');
    const attempts = await findRecentAttempts(context.db, account.id, limit);
    const text = formatTable(
      ['at', 'webhook-id', 'run', 'attempt', 'status', 'delivery', 'error'],
      attempts.map((a) => [a.at.toISOString(), a.webhookId, a.runId, a.attempt, a.status ?? '-', a.delivery, a.error ?? '']),
    );
    return { text: attempts.length ? text : `no delivery attempts for ${account.name} yet`, json: { name: account.name, attempts } };
  },
};

async function accountNamed(context: CommandContext) {
  const name = required(context, 'name');
  const account = await findServiceAccountByName(context.db, name);
  if (!account) throw new CommandError(`no service account is named ${name}`);
  return account;
}
