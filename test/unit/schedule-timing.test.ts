import assert from 'node:assert/strict';
import { cronProblem, nextFiring, timeZoneProblem } from '../../runs/schedule-timing.js';

/** Which cron expressions and time zones a schedule takes (DESIGN §19), as BullMQ's scheduler reads them. */
describe('schedule timing', () => {
  it('takes 5 fields, or 6 with seconds first, and nothing else', () => {
    assert.equal(cronProblem('0 9 * * 1-5'), undefined);
    assert.equal(cronProblem('*/10 * * * * *'), undefined);
    for (const cron of ['* * * *', '* * * * * * *', '@daily', '', '   ']) assert.match(cronProblem(cron)!, /5 fields, or 6/, cron);
  });

  it('names what the parser refuses in a cron expression of the right length', () => {
    assert.match(cronProblem('61 * * * *')!, /^is not a cron expression BullMQ reads: .*61/);
    assert.match(cronProblem('0 0 30 2 *')!, /^is not a cron expression BullMQ reads/);
  });

  it('takes IANA time zones and refuses names and offsets the scheduler cannot read', () => {
    for (const tz of ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata']) assert.equal(timeZoneProblem(tz, '0 9 * * *'), undefined, tz);
    for (const tz of ['Mars/Olympus', '+05:00', '', 'x'.repeat(65)]) assert.match(timeZoneProblem(tz, '0 9 * * *')!, /IANA time zone/, tz);
  });

  it('reads the cron expression in the time zone, with seconds first when there are 6 fields', () => {
    const at = Date.parse('2026-06-01T12:00:00Z');
    assert.equal(new Date(nextFiring('0 9 * * *', 'Europe/Paris', at)!).toISOString(), '2026-06-02T07:00:00.000Z');
    assert.equal(new Date(nextFiring('30 * * * * *', 'UTC', at)!).toISOString(), '2026-06-01T12:00:30.000Z');
  });
});
