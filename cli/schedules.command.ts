import type { JsonObject } from '../shared/api.js';
import { AppError } from '../shared/errors.js';
import { openRedis } from '../runs/redis-connection.js';
import { openScheduleQueue } from '../runs/schedulers.js';
import { deleteSchedule, readSchedules, setSchedule, type ScheduleDeps, type ScheduleView } from '../runs/schedules.js';
import { CommandError, required, type Command, type CommandContext } from './command.js';
import { formatTable } from './format-table.js';

/**
 * Schedules (DESIGN §19): an agent run as a service account's background run at each firing of a
 * cron expression, by the worker processes. The same service as /api/admin/setSchedule and the others
 * (runs/schedules.ts); the command reaches Redis for the job schedulers as well as PostgreSQL.
 */

/** Each field of the service as the option that sets it, for its errors. */
const optionOf: Record<string, string> = { name: '--name', agentName: '--agent', account: '--account', cron: '--cron', tz: '--tz', inputs: '--inputs', convid: '--convid' };

export const setScheduleCommand: Command = {
  description: 'runs an agent as a service account\'s background run at each firing of a cron expression; a name in use is replaced',
  options: {
    name: { type: 'string', value: 'NAME', description: 'the schedule\'s name; setting a name in use replaces that schedule (required)' },
    agent: { type: 'string', value: 'AGENT', description: 'the published agent each firing runs (required)' },
    account: { type: 'string', value: 'ACCOUNT', description: 'the service account whose background runs they are: its limits, its webhook (required)' },
    cron: { type: 'string', value: 'EXPR', description: 'when: 5 fields, or 6 with seconds first, e.g. "0 9 * * 1-5" (required)' },
    tz: { type: 'string', value: 'ZONE', description: 'the IANA time zone EXPR is read in (default UTC)' },
    inputs: { type: 'string', value: 'JSON', description: 'the inputs of every run, a JSON object (default {})' },
    convid: { type: 'string', value: 'ID', description: 'a conversation of the account every firing continues (default: a new one each time)' },
  },
  async run(context) {
    const request = {
      name: required(context, 'name'),
      agentName: required(context, 'agent'),
      account: required(context, 'account'),
      cron: required(context, 'cron'),
      tz: optional(context, 'tz'),
      inputs: readInputs(context),
      convid: readConvid(context),
    };
    const { schedule, replaced } = await withSchedules(context, (deps) => setSchedule(deps, request));
    return { text: `schedule ${schedule.name} ${replaced ? 'replaced' : 'set'}\n${formatSchedules([schedule])}`, json: { schedule, replaced } };
  },
};

export const listSchedulesCommand: Command = {
  description: 'lists the schedules, each with its next firing',
  options: {},
  async run(context) {
    const schedules = await withSchedules(context, readSchedules);
    return { text: schedules.length ? formatSchedules(schedules) : 'no schedules', json: { schedules } };
  },
};

export const deleteScheduleCommand: Command = {
  description: 'deletes a schedule: it fires no more',
  options: { name: { type: 'string', value: 'NAME', description: 'the schedule (required)' } },
  async run(context) {
    const name = required(context, 'name');
    await withSchedules(context, (deps) => deleteSchedule(deps, name));
    return { text: `schedule ${name} deleted`, json: { name } };
  },
};

/** Runs `use` with the schedules' queue on a connection of its own; the service's errors as the options' errors. */
async function withSchedules<T>(context: CommandContext, use: (deps: ScheduleDeps) => Promise<T>): Promise<T> {
  const connection = openRedis(context.config, { maxRetriesPerRequest: 1 });
  connection.on('error', () => undefined);
  const queue = openScheduleQueue(connection, context.config.queuePrefix, () => undefined);
  try {
    return await use({ db: context.db, queue });
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    const fields = (err.details?.fields ?? {}) as Record<string, string>;
    const lines = Object.entries(fields).map(([field, problem]) => `${optionOf[field] ?? field} ${problem}`);
    throw new CommandError([...lines, ...(lines.length ? ['nothing was scheduled'] : [err.message])].join('\n'));
  } finally {
    await queue.close();
    connection.disconnect();
  }
}

function readInputs(context: CommandContext): JsonObject | undefined {
  const text = optional(context, 'inputs');
  if (text === undefined) return undefined;
  let inputs: unknown;
  try {
    inputs = JSON.parse(text);
  } catch {
    throw new CommandError('--inputs must be a JSON object, such as \'{"query":"hello"}\'');
  }
  if (typeof inputs !== 'object' || inputs === null || Array.isArray(inputs)) throw new CommandError('--inputs must be a JSON object, such as \'{"query":"hello"}\'');
  return inputs as JsonObject;
}

function readConvid(context: CommandContext): string | undefined {
  const convid = optional(context, 'convid');
  if (convid !== undefined && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(convid)) throw new CommandError('--convid must be a conversation id');
  return convid;
}

function optional(context: CommandContext, name: string): string | undefined {
  const value = context.values[name];
  return typeof value === 'string' && value.trim() ? value.trim() : undefined;
}

function formatSchedules(schedules: ScheduleView[]): string {
  return formatTable(
    ['name', 'agent', 'account', 'cron', 'tz', 'inputs', 'convid', 'next firing'],
    schedules.map((s) => [s.name, s.agentName, s.account, s.cron, s.tz, JSON.stringify(s.inputs), s.convid ?? '(new each time)', s.nextFiring ?? '(none yet)']),
  );
}
