import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { agentNamePattern, plans, roles, type Plan, type Role } from '../shared/api.js';
import { compileAgent } from '../shared/compile-agent.js';
import { failedPasswordRules, passwordRules } from '../shared/password-rules.js';
import { migrateToLatest } from '../db/database.js';
import { insertAgentVersion } from '../db/agents.repository.js';
import { createServiceAccount as addServiceAccount, createUser as addUser, emailPattern, removeServiceAccount, rotateServiceAccountKey, type AccountChanges } from '../runs/accounts.js';
import { findFailedExecutions } from '../db/error-report.repository.js';
import { findUsageRecords, reportRowLimit, sumUsage, type ReportRange } from '../db/usage.repository.js';
import { resolveReportRange } from '../server/admin/admin.schemas.js';
import { CommandError, oneOf, required, type Command, type CommandContext } from './command.js';
import { deleteSecret, listSecrets, setSecret } from './agent-secrets.command.js';
import { saveDraft } from './drafts.command.js';
import { getLimits, setLimits } from './limits.command.js';
import { formatTable } from './format-table.js';
import { removeWebhook, setWebhook, webhookDeliveries } from './webhooks.command.js';
import { deleteScheduleCommand, listSchedulesCommand, setScheduleCommand } from './schedules.command.js';
import { announceServiceAccountChange } from './service-account-changes.js';

const migrate: Command = {
  description: 'applies the database migrations not applied yet (npm start does too)',
  options: {},
  async run({ db }) {
    const applied = await migrateToLatest(db);
    return { text: applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date', json: { applied } };
  },
};

const roleOption = { type: 'string', description: `the role: ${roles.join(', ')} (default user)` } as const;
const planOption = { type: 'string', description: `the plan: ${plans.join(', ')} (default free)` } as const;

const createUser: Command = {
  description: 'creates a user; without --password the user sets one by email code',
  options: {
    email: { type: 'string', description: 'the email address the user signs in with (required)' },
    password: { type: 'string', description: 'a password meeting the password rules' },
    role: roleOption,
    plan: planOption,
    'call-name': { type: 'string', value: 'NAME', description: 'what the app calls the user (default: the email address before the @)' },
  },
  async run(context) {
    const email = required(context, 'email').toLowerCase();
    if (!emailPattern.test(email)) throw new CommandError('--email is not an email address');
    const password = context.values.password;
    if (typeof password === 'string') {
      const failed = failedPasswordRules(password, email);
      const texts = passwordRules.filter((rule) => failed.includes(rule.id)).map((rule) => `${rule.id}: ${rule.text}`);
      if (texts.length) throw new CommandError(`--password does not meet the password rules:\n  ${texts.join('\n  ')}`);
    }
    const user = await addUser(context.db, {
      email,
      role: oneOf<Role>(context, 'role', roles, 'user'),
      plan: oneOf<Plan>(context, 'plan', plans, 'free'),
      ...(typeof context.values['call-name'] === 'string' ? { callName: context.values['call-name'] } : {}),
      ...(typeof password === 'string' ? { password } : {}),
    });
    if (!user) throw new CommandError(`a user with email ${email} already exists`);
    const json = { id: user.id, email: user.email, role: user.role, plan: user.plan, callName: user.call_name };
    return { text: `created user ${user.email} (${user.role}, ${user.plan}) id ${user.id}`, json };
  },
};

const accountName = { name: { type: 'string', description: 'the service account (required)' } } as const;

const createServiceAccount: Command = {
  description: 'creates a service account and prints its key (shown only here)',
  options: { name: { type: 'string', description: 'the new account\'s name (required)' }, role: roleOption, plan: planOption },
  async run(context) {
    const name = required(context, 'name');
    const created = await addServiceAccount(context.db, { name, role: oneOf<Role>(context, 'role', roles, 'user'), plan: oneOf<Plan>(context, 'plan', plans, 'free') });
    if (!created) throw new CommandError(`a service account named ${name} already exists`);
    const { account, key } = created;
    const json = { id: account.id, name: account.name, role: account.role, plan: account.plan, key };
    return { text: `created service account ${name} (${account.role})\nkey (shown once): ${key}`, json };
  },
};

const rotateServiceAccount: Command = {
  description: 'gives a service account a new key (printed once); the old one stops working',
  options: accountName,
  async run(context) {
    const name = required(context, 'name');
    const rotated = await rotateServiceAccountKey(accountChanges(context), name);
    if (!rotated) throw new CommandError(`no service account is named ${name}`);
    const { value, warning } = rotated;
    const text = `rotated the key of ${name}; the old key no longer works\nkey (shown once): ${value.key}`;
    return { text, json: { id: value.account.id, name, key: value.key }, ...(warning ? { warnings: [warning] } : {}) };
  },
};

const deleteAccount: Command = {
  description: 'deletes a service account; its key stops working',
  options: accountName,
  async run(context) {
    const name = required(context, 'name');
    const removed = await removeServiceAccount(accountChanges(context), name);
    if (!removed) throw new CommandError(`no service account is named ${name}`);
    const { warning } = removed;
    return { text: `deleted service account ${name}`, json: { name, deleted: true }, ...(warning ? { warnings: [warning] } : {}) };
  },
};

/** Service account changes are announced to the web processes over a Redis connection of the command's own. */
function accountChanges(context: CommandContext): AccountChanges {
  return { db: context.db, announce: (accountId) => announceServiceAccountChange(context.config, accountId) };
}

/** Publishes each file as the agent named by its file name; stops at the first that does not compile. */
const publishAgents: Command = {
  description: 'publishes each file as a new version of the agent named by its file name (hello.ts: hello)',
  positionals: 'FILE...',
  options: {},
  async run({ db, positionals }) {
    if (!positionals.length) throw new CommandError('name at least one agent file: agents:publish agents/hello.ts');
    const published: { agentName: string; version: number }[] = [];
    for (const file of positionals) {
      const agentName = basename(file, extname(file));
      if (!agentNamePattern.test(agentName)) throw new CommandError(`${file}: "${agentName}" is not a valid agent name`);
      const source = await readFile(file, 'utf8').catch(() => {
        throw new CommandError(`${file}: cannot read the file`);
      });
      const compiled = await compileAgent(source, basename(file));
      if (!compiled.ok) {
        const text = compiled.errors.map((e) => `${file}:${e.line}:${e.column}: ${e.message}`).join('\n');
        return { text, json: { agentName, compileErrors: compiled.errors, published }, exitCode: 1 };
      }
      const version = await insertAgentVersion(db, agentName, { source, code: compiled.code, sourceMap: compiled.sourceMap });
      published.push({ agentName, version });
    }
    const text = published.map((p) => `published ${p.agentName} version ${p.version}`).join('\n');
    return { text, json: published.length === 1 ? published[0] : { published } };
  },
};

/** `--since` / `--until` (ISO), with the defaults of the API: until now, since 30 days before until. */
function reportRange(context: CommandContext): ReportRange {
  const read = (name: string): Date | undefined => {
    const value = context.values[name];
    if (value === undefined) return undefined;
    const date = typeof value === 'string' ? new Date(value) : new Date(NaN);
    if (Number.isNaN(date.getTime())) throw new CommandError(`--${name} must be an ISO date-time such as 2025-01-31T00:00:00Z`);
    return date;
  };
  const range = resolveReportRange({ since: read('since'), until: read('until') }, new Date());
  if (!range) throw new CommandError('--since must not be after --until');
  return range;
}

const rangeOptions: Command['options'] = {
  since: { type: 'string', value: 'ISO', description: 'from this date-time (default: 30 days before --until)' },
  until: { type: 'string', value: 'ISO', description: 'to this date-time (default: now)' },
};

function rangeLine(title: string, range: ReportRange, truncated: boolean): string {
  return `${title} ${range.since.toISOString()} .. ${range.until.toISOString()}${truncated ? ` (only the newest ${reportRowLimit} rows)` : ''}`;
}

const usageReport: Command = {
  description: 'the usage report: totals per account, role and day, then the calls',
  options: rangeOptions,
  async run(context) {
    const range = reportRange(context);
    const [totals, { rows, truncated }] = await Promise.all([sumUsage(context.db, range), findUsageRecords(context.db, range)]);
    const text = [
      rangeLine('usage', range, truncated),
      '',
      formatTable(['day', 'account', 'role', 'calls', 'failed'], totals.map((t) => [t.day, t.name, t.role, t.calls, t.failed])),
      '',
      formatTable(
        ['at', 'account', 'role', 'endpoint', 'agent', 'result', 'status', 'ms'],
        rows.map((r) => [r.at.toISOString(), r.name, r.role, r.endpoint, r.agentName, r.resultCode, r.httpStatus, r.durationMs]),
      ),
    ].join('\n');
    return { text, json: { since: range.since, until: range.until, totals, rows, truncated } };
  },
};

const errorReport: Command = {
  description: 'the error report: runs that ended in neither success nor ask',
  options: rangeOptions,
  async run(context) {
    const range = reportRange(context);
    const { rows, truncated } = await findFailedExecutions(context.db, range);
    const text = [
      rangeLine('errors', range, truncated),
      '',
      formatTable(
        ['at', 'agent', 'result', 'message', 'caller', 'ms', 'execution'],
        rows.map((r) => [r.at.toISOString(), r.agentName, r.resultCode, r.message, `${r.principalKind}:${r.principalId}`, r.durationMs, r.executionId]),
      ),
    ].join('\n');
    return { text, json: { since: range.since, until: range.until, rows, truncated } };
  },
};

export const commands: Record<string, Command> = {
  migrate,
  'users:create': createUser,
  'service-accounts:create': createServiceAccount,
  'service-accounts:rotate': rotateServiceAccount,
  'service-accounts:delete': deleteAccount,
  'agents:publish': publishAgents,
  'drafts:save': saveDraft,
  'secrets:set': setSecret,
  'secrets:delete': deleteSecret,
  'secrets:list': listSecrets,
  'limits:set': setLimits,
  'limits:get': getLimits,
  'webhooks:set': setWebhook,
  'webhooks:delete': removeWebhook,
  'webhooks:deliveries': webhookDeliveries,
  'schedules:set': setScheduleCommand,
  'schedules:list': listSchedulesCommand,
  'schedules:delete': deleteScheduleCommand,
  'reports:usage': usageReport,
  'reports:errors': errorReport,
};
