/**
 * Calls `callback` once the event loop has polled for I/O once more: an immediate scheduled from an
 * immediate runs in the next loop's check phase, after its poll phase. A plain setImmediate would run
 * before any new request is read. For work that would otherwise hold the loop as one piece with what
 * came before it.
 */
export function afterIoPoll(callback: () => void): void {
  setImmediate(() => setImmediate(callback));
}
