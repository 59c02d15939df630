import assert from 'node:assert/strict';
import { nextDeliveryAttempt } from '../../server/admin/next-delivery-attempt.js';
import { deliveryAttempts, retryDelaysMs } from '../../shared/webhook-jobs.js';

/** When the console says a webhook delivery's next retry goes (server/admin/next-delivery-attempt.ts). */
describe('next webhook delivery attempt', () => {
  const start = Date.UTC(2026, 0, 1);
  const attemptsAt = (...seconds: number[]) => seconds.map((s) => ({ at: new Date(start + s * 1000) }));

  it('is the last attempt plus its delay on the retry schedule', () => {
    assert.equal(nextDeliveryAttempt({ status: 'pending', requeuedAt: null }, attemptsAt(0))?.getTime(), start + 1000);
    assert.equal(nextDeliveryAttempt({ status: 'pending', requeuedAt: null }, attemptsAt(0, 1, 6))?.getTime(), start + 6000 + 30_000);
  });

  it('is none for a delivery not pending, not tried yet, or out of retries', () => {
    assert.equal(nextDeliveryAttempt({ status: 'delivered', requeuedAt: null }, attemptsAt(0)), undefined);
    assert.equal(nextDeliveryAttempt({ status: 'failed', requeuedAt: null }, attemptsAt(0)), undefined);
    assert.equal(nextDeliveryAttempt({ status: 'pending', requeuedAt: null }, []), undefined);
    const all = attemptsAt(...Array.from({ length: deliveryAttempts }, (_, i) => i));
    assert.equal(nextDeliveryAttempt({ status: 'pending', requeuedAt: null }, all), undefined);
  });

  it('starts the schedule over with the attempts after an admin asked to deliver again', () => {
    const earlier = attemptsAt(...Array.from({ length: deliveryAttempts }, (_, i) => i));
    const requeuedAt = new Date(start + 100_000);
    assert.equal(nextDeliveryAttempt({ status: 'pending', requeuedAt }, earlier), undefined, 'not tried again yet');
    const later = [...earlier, ...attemptsAt(101)];
    assert.equal(nextDeliveryAttempt({ status: 'pending', requeuedAt }, later)?.getTime(), start + 101_000 + retryDelaysMs[0]!);
  });
});
