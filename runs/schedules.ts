import type { JsonObject } from '../shared/api.js';
import { agentNamePattern } from '../shared/api.js';
import { AppError, invalidRequest, type FieldErrors } from '../shared/errors.js';
import type { Db } from '../db/database.js';
import { findLatestAgentVersionNumbers } from '../db/agents.repository.js';
import { findConversation } from '../db/conversations.repository.js';
import { deleteScheduleById, deleteScheduleByName, listSchedules, restoreSchedule, upsertSchedule, type ListedSchedule } from '../db/schedules.repository.js';
import { findServiceAccountByName } from '../db/service-accounts.repository.js';
import { cronProblem, defaultTimeZone, timeZoneProblem } from './schedule-timing.js';
import { readNextFirings, removeScheduler, upsertScheduler, type ScheduleQueue } from './schedulers.js';

/**
 * Schedules (DESIGN §19), for the admin endpoints and the command line alike. A set writes the row
 * (PostgreSQL: what runs, as whom) and then the job scheduler (BullMQ: when); a set of a name in use
 * replaces that schedule. Nothing is written when any field is wrong.
 */

export interface ScheduleDeps {
  db: Db;
  queue: ScheduleQueue;
}

/** A schedule as an admin asks for it. */
export interface ScheduleRequest {
  name: string;
  agentName: string;
  /** The service account whose background runs the firings are, by name. */
  account: string;
  cron: string;
  tz?: string | undefined;
  inputs?: JsonObject | undefined;
  convid?: string | undefined;
}

/** A schedule as the admin endpoints answer it and `schedules:list --json` prints it. */
export interface ScheduleView {
  name: string;
  agentName: string;
  account: string;
  cron: string;
  tz: string;
  inputs: JsonObject;
  convid: string | null;
  /** ISO 8601; null when its job scheduler is missing (the workers make it again when they start or reconnect). */
  nextFiring: string | null;
  createdAt: string;
  updatedAt: string;
}

export const scheduleNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
export const scheduleNameRule = 'must be 1-100 letters, digits, . _ or -, starting with a letter or digit';

/** Creates the schedule, or replaces the one of that name; answers it and whether one was replaced. */
export async function setSchedule(deps: ScheduleDeps, request: ScheduleRequest): Promise<{ schedule: ScheduleView; replaced: boolean }> {
  const tz = request.tz ?? defaultTimeZone;
  checkScheduleRequest({ ...request, tz });
  const account = await findServiceAccountByName(deps.db, request.account);
  if (!account) throw new AppError('notFound', `No service account named ${request.account}; nothing was scheduled.`);
  if (!(await findLatestAgentVersionNumbers(deps.db, [request.agentName])).has(request.agentName)) {
    throw new AppError('agentNotFound', `No agent is named ${request.agentName}; nothing was scheduled.`);
  }
  if (request.convid !== undefined) {
    const conversation = await findConversation(deps.db, request.convid);
    if (!conversation || conversation.owner_kind !== 'serviceAccount' || conversation.owner_id !== account.id) {
      throw new AppError('notFound', `No conversation ${request.convid} of ${request.account}; nothing was scheduled.`);
    }
  }
  const fields = { name: request.name, agentName: request.agentName, serviceAccountId: account.id, cron: request.cron.trim(), tz, inputs: request.inputs ?? {}, convid: request.convid ?? null };
  const { schedule, previous } = await upsertSchedule(deps.db, fields);
  try {
    await upsertScheduler(deps.queue, schedule);
  } catch (err) {
    // BullMQ unreachable: the row goes back as it was, so the schedule is as before the call.
    await (previous ? restoreSchedule(deps.db, previous) : deleteScheduleById(deps.db, schedule.id));
    throw err;
  }
  const next = (await deps.queue.getJobScheduler(schedule.id))?.next;
  return { schedule: scheduleView({ ...schedule, account_name: account.name }, next ?? undefined), replaced: previous !== undefined };
}

/** Every schedule, by name, with its next firing. */
export async function readSchedules(deps: ScheduleDeps): Promise<ScheduleView[]> {
  const [rows, nextFirings] = await Promise.all([listSchedules(deps.db), readNextFirings(deps.queue)]);
  return rows.map((row) => scheduleView(row, nextFirings.get(row.id)));
}

/**
 * Deletes the schedule named `name` (404 notFound when none is). Once its row is gone it fires no
 * more runs: a firing whose row is gone removes its scheduler, should removing it here have failed.
 */
export async function deleteSchedule(deps: ScheduleDeps, name: string): Promise<void> {
  const id = await deleteScheduleByName(deps.db, name);
  if (id === undefined) throw new AppError('notFound', `No schedule named ${name}.`);
  await removeScheduler(deps.queue, id).catch(() => undefined);
}

/** Throws 400 invalidRequest naming every field that is wrong. */
export function checkScheduleRequest(request: ScheduleRequest & { tz: string }): void {
  const fields: FieldErrors = {};
  if (!scheduleNamePattern.test(request.name)) fields.name = scheduleNameRule;
  if (!agentNamePattern.test(request.agentName)) fields.agentName = 'must be an agent name';
  const cron = cronProblem(request.cron);
  if (cron) fields.cron = cron;
  const tz = timeZoneProblem(request.tz, request.cron);
  if (tz) fields.tz = tz;
  if (Object.keys(fields).length) throw invalidRequest(fields, 'The schedule is not valid; nothing was scheduled.');
}

function scheduleView(row: ListedSchedule, next: number | undefined): ScheduleView {
  return {
    name: row.name,
    agentName: row.agent_name,
    account: row.account_name,
    cron: row.cron,
    tz: row.tz,
    inputs: row.inputs,
    convid: row.convid,
    nextFiring: next === undefined ? null : new Date(next).toISOString(),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
