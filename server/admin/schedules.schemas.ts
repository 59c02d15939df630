import { z } from 'zod';
import { scheduleNamePattern, scheduleNameRule } from '../../runs/schedules.js';
import { jsonObject } from '../exec/exec.schemas.js';

const name = z.string().regex(scheduleNamePattern, scheduleNameRule).describe('The schedule\'s name, unique: a set of a name in use replaces that schedule.');

/** Body of /api/admin/setSchedule (DESIGN §19); cron and tz are checked by runs/schedules.ts. */
export const setScheduleBody = z.strictObject({
  name,
  agentName: z.string().describe('The published agent each firing runs.'),
  account: z.string().min(1).describe('The service account, by name, whose background run each firing is (its limits, its webhook).'),
  cron: z.string().describe('A cron expression of 5 fields, or 6 with seconds first, as BullMQ job schedulers read it.'),
  tz: z.string().optional().describe('An IANA time zone the cron expression is read in (UTC when left out).'),
  inputs: jsonObject.optional().describe('The inputs of every run ({} when left out).'),
  convid: z.uuid('must be a conversation id of the account').optional().describe('The conversation every firing continues; a new conversation each time when left out.'),
});

export const scheduleNameBody = z.strictObject({ name });

/** A schedule as the admin endpoints answer it. */
export const scheduleAnswer = z.object({
  name: z.string(),
  agentName: z.string(),
  account: z.string().describe('The service account\'s name.'),
  cron: z.string(),
  tz: z.string(),
  inputs: jsonObject,
  convid: z.uuid().nullable(),
  nextFiring: z.iso.datetime().nullable().describe('When it fires next; null while its job scheduler is missing (workers make it again when they start or reconnect to Redis).'),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});

export const setScheduleAnswer = z.object({ schedule: scheduleAnswer, replaced: z.boolean().describe('True when a schedule of that name was replaced.') });
export const listSchedulesAnswer = z.object({ schedules: z.array(scheduleAnswer) });
export const deleteScheduleAnswer = z.object({ name: z.string() });
