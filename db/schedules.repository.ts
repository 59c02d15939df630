import type { JsonObject, Plan, Role } from '../shared/api.js';
import type { Db } from './database.js';
import type { ScheduleRow } from './schema.js';

/** A schedule as an admin sets it (DESIGN §19). */
export interface ScheduleFields {
  name: string;
  agentName: string;
  serviceAccountId: string;
  cron: string;
  tz: string;
  inputs: JsonObject;
  convid: string | null;
}

/** A schedule with the name of its service account, as schedules:list shows it. */
export interface ListedSchedule extends ScheduleRow {
  account_name: string;
}

/** A schedule with what its firing runs as: its service account's role and plan. */
export interface FiringSchedule extends ScheduleRow {
  role: Role;
  plan: Plan;
}

/**
 * Writes the schedule by its name: a new row, or the row of that name replaced (keeping its id).
 * Answers the row written and, when one was replaced, the row as it was before.
 */
export async function upsertSchedule(db: Db, fields: ScheduleFields): Promise<{ schedule: ScheduleRow; previous?: ScheduleRow }> {
  return db.transaction().execute(async (trx) => {
    const previous = await trx.selectFrom('schedules').selectAll().where('name', '=', fields.name).forUpdate().executeTakeFirst();
    const columns = scheduleColumns(fields);
    const schedule = previous
      ? await trx.updateTable('schedules').set({ ...columns, updated_at: new Date() }).where('id', '=', previous.id).returningAll().executeTakeFirstOrThrow()
      : await trx
          .insertInto('schedules')
          .values(columns)
          // A concurrent set of the same new name: the later one replaces it, as a set does.
          .onConflict((oc) => oc.column('name').doUpdateSet({ ...columns, updated_at: new Date() }))
          .returningAll()
          .executeTakeFirstOrThrow();
    return previous ? { schedule, previous } : { schedule };
  });
}

/** Puts a replaced schedule back as it was (its set could not reach BullMQ). */
export async function restoreSchedule(db: Db, previous: ScheduleRow): Promise<void> {
  const { id, created_at: _created, ...columns } = previous;
  await db.updateTable('schedules').set({ ...columns, inputs: JSON.stringify(columns.inputs) }).where('id', '=', id).execute();
}

/** Deletes the schedule with this id; answers whether there was one. */
export async function deleteScheduleById(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('schedules').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Deletes the schedule named `name`; answers its id, or undefined when none has that name. */
export async function deleteScheduleByName(db: Db, name: string): Promise<string | undefined> {
  const row = await db.deleteFrom('schedules').where('name', '=', name).returning('id').executeTakeFirst();
  return row?.id;
}

/** Every schedule, by name, with its service account's name. */
export async function listSchedules(db: Db): Promise<ListedSchedule[]> {
  return db
    .selectFrom('schedules')
    .innerJoin('service_accounts', 'service_accounts.id', 'schedules.service_account_id')
    .selectAll('schedules')
    .select('service_accounts.name as account_name')
    .orderBy('schedules.name')
    .execute();
}

/** The id, cron and time zone of every schedule: what BullMQ needs to know of each. */
export async function listScheduleTimings(db: Db): Promise<Pick<ScheduleRow, 'id' | 'cron' | 'tz'>[]> {
  return db.selectFrom('schedules').select(['id', 'cron', 'tz']).execute();
}

/** The schedule with this id and what its firing runs as, or undefined when it was deleted. */
export async function findFiringSchedule(db: Db, id: string): Promise<FiringSchedule | undefined> {
  return db
    .selectFrom('schedules')
    .innerJoin('service_accounts', 'service_accounts.id', 'schedules.service_account_id')
    .selectAll('schedules')
    .select(['service_accounts.role', 'service_accounts.plan'])
    .where('schedules.id', '=', id)
    .executeTakeFirst();
}

function scheduleColumns(fields: ScheduleFields) {
  return {
    name: fields.name,
    agent_name: fields.agentName,
    service_account_id: fields.serviceAccountId,
    cron: fields.cron,
    tz: fields.tz,
    inputs: JSON.stringify(fields.inputs),
    convid: fields.convid,
  };
}
