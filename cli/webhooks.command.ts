import { createSecretBox } from '../shared/secret-box.js';
import { generateWebhookSecret } from '../shared/webhook-signature.js';
import { resolveSecrets } from '../db/resolve-secrets.js';
import { findServiceAccountByName } from '../db/service-accounts.repository.js';
import { deleteWebhook, findRecentAttempts, upsertWebhook } from '../db/webhooks.repository.js';
import { parseAllowList } from '../workers/outbound-http/destination-guard.js';
import { checkDestination } from '../workers/outbound-http/http-fetch.js';
import { CommandError, required, type Command, type CommandContext } from './command.js';
import { formatTable } from './format-table.js';

/** Webhooks (DESIGN §14): one endpoint per service account, for the ends of its background runs. */

const accountOption = { name: { type: 'string', value: 'ACCOUNT', description: 'the service account (required)' } } as const;

export const setWebhook: Command = {
  description: 'gives a service account its webhook endpoint; prints {url, secret} (the signing secret is shown only here)',
  options: { ...accountOption, url: { type: 'string', value: 'URL', description: 'the http: or https: endpoint; it must pass WEBHOOK_ALLOW (required)' } },
  async run(context) {
    const account = await accountNamed(context);
    const url = await deliverableUrl(context);
    const secret = generateWebhookSecret();
    const { secretsKey } = await resolveSecrets(context.db, context.config, context.logger);
    await upsertWebhook(context.db, account.id, url.href, createSecretBox(secretsKey).seal(secret));
    const text = `webhook of ${account.name}: ${url.href}\nsigning secret (shown once): ${secret}`;
    return { text, json: { url: url.href, secret } };
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
    const attempts = (await findRecentAttempts(context.db, account.id, limit)).map((a) => ({ ...a, outcome: attemptOutcome(a) }));
    // The delivery's own status (pending while retried, delivered, failed once retries ran out) on its newest attempt's row only.
    const shown = new Set<string>();
    const text = formatTable(
      ['at', 'webhook-id', 'run', 'attempt', 'outcome', 'status', 'error', 'delivery'],
      attempts.map((a) => {
        const delivery = shown.has(a.webhookId) ? '' : a.delivery;
        shown.add(a.webhookId);
        return [a.at.toISOString(), a.webhookId, a.runId, a.attempt, a.outcome, a.status ?? '-', a.error ?? '', delivery];
      }),
    );
    return { text: attempts.length ? text : `no delivery attempts for ${account.name} yet`, json: { name: account.name, attempts } };
  },
};

/** An attempt delivered the event when it recorded no error: deliver-webhook.ts records one for anything but a 2xx. */
function attemptOutcome(attempt: { error: string | null }): 'delivered' | 'failed' {
  return attempt.error === null ? 'delivered' : 'failed';
}

/**
 * --url, refused at once when a delivery to it would be refused now: deliveries check it against
 * WEBHOOK_ALLOW with the same guard (and again at each attempt, as the allow list or DNS may change).
 */
async function deliverableUrl(context: CommandContext): Promise<URL> {
  const text = required(context, 'url');
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (!url || !['http:', 'https:'].includes(url.protocol)) throw new CommandError('--url must be an http: or https: URL');
  try {
    await checkDestination(url, parseAllowList(context.config.webhookAllow), 'WEBHOOK_ALLOW');
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') throw new CommandError(`--url: ${url.hostname} does not resolve (${code}); nothing was stored`);
    throw new CommandError(`--url: ${(err as Error).message} (WEBHOOK_ALLOW lists where webhooks may go); nothing was stored`);
  }
  return url;
}

async function accountNamed(context: CommandContext) {
  const name = required(context, 'name');
  const account = await findServiceAccountByName(context.db, name);
  if (!account) throw new CommandError(`no service account is named ${name}`);
  return account;
}
