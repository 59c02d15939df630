import { deliveryAttempts, retryDelaysMs } from '../../shared/webhook-jobs.js';

/**
 * About when a pending delivery's next retry goes: its last attempt of the current round (those after
 * `requeuedAt`, when an admin asked to deliver it again: a fresh job, whose retries start the schedule
 * over) plus that attempt's delay on the schedule of DESIGN §14. Undefined when it is not pending,
 * has not been tried in this round (it goes as soon as a worker takes it) or has no retry left.
 * "About": a delivery whose account holds all its delivery slots waits a little longer.
 */
export function nextDeliveryAttempt(delivery: { status: string; requeuedAt: Date | null }, attempts: readonly { at: Date }[]): Date | undefined {
  if (delivery.status !== 'pending') return undefined;
  const round = delivery.requeuedAt ? attempts.filter((a) => a.at.getTime() >= delivery.requeuedAt!.getTime()) : attempts;
  const last = round.at(-1);
  if (!last || round.length >= deliveryAttempts) return undefined;
  return new Date(last.at.getTime() + retryDelaysMs[round.length - 1]!);
}
