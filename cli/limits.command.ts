import { AppError } from '../shared/errors.js';
import { callerLimitsMaxAgeMs } from '../runs/caller-limits-cache.js';
import { checkLimitsChange, findNamedAccount, limitsView, readCallerLimits, setCallerLimits, type AccountName, type EffectiveLimits, type LimitName, type LimitsChange, type NamedAccount } from '../runs/caller-limits.js';
import { CommandError, type Command, type CommandContext } from './command.js';

/**
 * The limits per caller commands (DESIGN §16): `limits:set` changes the limits given and leaves the
 * others; `default` puts one back to the default from config. Web processes see a change within
 * a few seconds (they cache each caller's limits that long).
 */

const accountOptions = {
  name: { type: 'string', value: 'ACCOUNT', description: 'a service account (this or --user)' },
  user: { type: 'string', value: 'EMAIL', description: 'a user, by email address (this or --name)' },
} as const;

/** Each limit's option. */
const limitOptions: Record<string, LimitName> = { 'runs-per-minute': 'runsPerMinute', 'in-flight': 'runsInFlight', weight: 'weight' };

export const setLimits: Command = {
  description: 'sets an account\'s limits per caller; the ones not given stay as they are',
  options: {
    ...accountOptions,
    'runs-per-minute': { type: 'string', value: 'N', description: 'runs it may start per minute: a number (0: no limit) or default' },
    'in-flight': { type: 'string', value: 'N', description: 'runs it may have under way at once: a number (0: no limit) or default' },
    weight: { type: 'string', value: 'W', description: 'its share of the workers beside other callers: a number from 1, or default' },
  },
  async run(context) {
    const named = accountName(context);
    const change = readChange(context);
    if (!Object.keys(change).length) throw new CommandError('give at least one of --runs-per-minute, --in-flight, --weight');
    const account = await found(context, named);
    const effective = await setCallerLimits(context.db, context.config, account, change);
    return { text: `limits of ${describe(account)} set\n${formatLimits(effective)}\n(web processes apply them within ${callerLimitsMaxAgeMs / 1000} s)`, json: limitsView(account, effective) };
  },
};

export const getLimits: Command = {
  description: 'shows an account\'s limits per caller, saying which are the defaults',
  options: accountOptions,
  async run(context) {
    const account = await found(context, accountName(context));
    const effective = await readCallerLimits(context.db, context.config, account);
    return { text: `limits of ${describe(account)}\n${formatLimits(effective)}`, json: limitsView(account, effective) };
  },
};

function accountName(context: CommandContext): AccountName {
  const name = trimmed(context.values.name);
  const email = trimmed(context.values.user);
  if ((name === undefined) === (email === undefined)) throw new CommandError('give either --name ACCOUNT (a service account) or --user EMAIL (a user)');
  return name !== undefined ? { name } : { email: email! };
}

/**
 * Every limit option given, checked as the admin endpoints check them (runs/caller-limits.ts
 * checkLimitsChange); all the bad ones are named at once, and nothing is changed.
 */
function readChange(context: CommandContext): LimitsChange {
  const change: LimitsChange = {};
  for (const [option, limit] of Object.entries(limitOptions)) {
    const raw = trimmed(context.values[option]);
    if (raw === undefined) continue;
    change[limit] = raw === 'default' ? null : /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  }
  try {
    checkLimitsChange(change);
  } catch (err) {
    if (!(err instanceof AppError && err.code === 'invalidRequest')) throw err;
    const fields = (err.details?.fields ?? {}) as Record<string, string>;
    throw new CommandError(Object.entries(limitOptions).filter(([, limit]) => fields[limit]).map(([option, limit]) => `--${option} ${fields[limit]}, or default`).join('\n'));
  }
  return change;
}

async function found(context: CommandContext, named: AccountName): Promise<NamedAccount> {
  try {
    return await findNamedAccount(context.db, named);
  } catch (err) {
    if (err instanceof AppError && err.code === 'notFound') throw new CommandError('name' in named ? `no service account named ${named.name}` : `no user with the email ${named.email}`);
    throw err;
  }
}

function trimmed(value: string | boolean | undefined): string | undefined {
  return typeof value === 'string' && value.trim() ? value.trim() : undefined;
}

function describe(account: NamedAccount): string {
  return account.kind === 'serviceAccount' ? `service account ${account.label}` : `user ${account.label}`;
}

function formatLimits({ limits, defaults }: EffectiveLimits): string {
  const line = (name: LimitName, value: number) => `  ${name}: ${value === 0 && name !== 'weight' ? '0 (no limit)' : value}${defaults.includes(name) ? ' (default)' : ''}`;
  return [line('runsPerMinute', limits.runsPerMinute), line('runsInFlight', limits.runsInFlight), line('weight', limits.weight)].join('\n');
}

