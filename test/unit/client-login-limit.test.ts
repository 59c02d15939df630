import assert from 'node:assert/strict';
import { clientLimitWaitMs } from '../../server/auth/sign-in-limits.js';

const windowMs = 15 * 60_000;
const quarterTurn = Date.UTC(2026, 10, 27, 8, 30);

describe("a client's failed logins against LOGIN_IP_MAX_FAILURES", () => {
  it('lets a client under its limit try at once', () => {
    assert.equal(clientLimitWaitMs([], 3, quarterTurn), 0);
    assert.equal(clientLimitWaitMs([quarterTurn - 2000, quarterTurn - 1000], 3, quarterTurn), 0);
  });

  it('makes a client at its limit wait until its oldest failure is 15 minutes old', () => {
    const now = quarterTurn + 5 * 60_000;
    assert.equal(clientLimitWaitMs([now - 3000, now - 2000, now - 1000], 3, now), windowMs - 3000);
  });

  it('counts failures on either side of a quarter of an hour together', () => {
    const failedAt = [quarterTurn - 500, quarterTurn - 200, quarterTurn + 100];
    assert.equal(clientLimitWaitMs(failedAt, 3, quarterTurn + 200), windowMs - 700);
  });

  it('forgets failures older than 15 minutes', () => {
    const now = quarterTurn;
    assert.equal(clientLimitWaitMs([now - windowMs, now - 10, now - 5], 3, now), 0);
  });

  it('with more failures than the limit (tries that passed the check together), waits for the newest limit − 1 to be left', () => {
    const now = quarterTurn;
    const failedAt = [now - 5000, now - 1000, now - 4000, now - 2000, now - 3000];
    assert.equal(clientLimitWaitMs(failedAt, 3, now), windowMs - 3000);
  });
});
