import type { RunListPosition } from '../../db/run-list.repository.js';

/**
 * The console's cursor into the list of runs: opaque to clients, base64url of the last run's start
 * (to the microsecond, as PostgreSQL keeps it) and id. Nothing in it is secret; it only says where a
 * page starts, and a changed one can only move that.
 */
export function encodeRunCursor(position: RunListPosition): string {
  return Buffer.from(`${position.startedAt}|${position.id}`, 'utf8').toString('base64url');
}

const positionText = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z)\|([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** The position a cursor names, or undefined when it is not one this server made. */
export function decodeRunCursor(cursor: string): RunListPosition | undefined {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) return undefined;
  const match = positionText.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match || Number.isNaN(Date.parse(match[1]!))) return undefined;
  return { startedAt: match[1]!, id: match[2]! };
}
