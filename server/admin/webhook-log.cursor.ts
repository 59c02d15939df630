import type { DeliveryLogPosition } from '../../db/webhook-log.repository.js';
import { decodeRunCursor, encodeRunCursor } from './run-cursor.js';

/** The delivery log's cursor: the run list's format (a time to the microsecond and a UUID), for a delivery's creation and id. */
export function encodeDeliveryCursor(position: DeliveryLogPosition): string {
  return encodeRunCursor({ startedAt: position.createdAt, id: position.id });
}

/** The position a cursor names, or undefined when it is not one this server made. */
export function decodeDeliveryCursor(cursor: string): DeliveryLogPosition | undefined {
  const position = decodeRunCursor(cursor);
  return position && { createdAt: position.startedAt, id: position.id };
}
