import { isDeepStrictEqual } from 'node:util';
import { AgentFault } from './error-codes.js';
import type { JournalEntry } from './sandbox.types.js';

/**
 * The replay cursor of one run (DESIGN §5, "Resuming at the ask is done by replay"). While entries
 * remain, each journaled call must match the next one and gets its recorded result; once they are
 * consumed the run is live and new calls are appended.
 */
export interface Journal {
  replay: readonly JournalEntry[];
  position: number;
  /** Every entry of this run so far, replayed and live, in call order. */
  recorded: JournalEntry[];
  /** Approximate size of the live entries, bounded because a paused run stores them. */
  bytes: number;
}

/**
 * Bounds on what one run may journal: a loop calling Date.now() or sys.fetch would otherwise grow the
 * host's memory (and the stored pause) until the deadline.
 */
export const maxJournalEntries = 100_000;
export const maxJournalBytes = 32 * 1024 * 1024;
const entryOverheadBytes = 64;

export type JournalOp = JournalEntry['op'];
export type EntryOf<K extends JournalOp> = Extract<JournalEntry, { op: K }>;

/** A replay that asks for a different call than the journal recorded; the run ends errorInAgent. */
export class ReplayDivergedError extends AgentFault {
  override name = 'ReplayDivergedError';
  constructor(detail: string) {
    super(`replay diverged: ${detail}`);
  }
}

export function createJournal(replay: readonly JournalEntry[]): Journal {
  return { replay, position: 0, recorded: [], bytes: 0 };
}

/** True until every recorded entry has been replayed; output is suppressed meanwhile. */
export function isReplaying(journal: Journal): boolean {
  return journal.position < journal.replay.length;
}

/**
 * The recorded entry for this call while replaying, or undefined when live.
 * `differs` names what changed between the recorded call and this one (null when they match).
 */
export function takeReplayed<K extends JournalOp>(
  journal: Journal,
  op: K,
  differs: (entry: EntryOf<K>) => string | null = () => null,
): EntryOf<K> | undefined {
  const entry = journal.replay[journal.position];
  if (!entry) return undefined;
  const callNumber = journal.position + 1;
  if (entry.op !== op) {
    throw new ReplayDivergedError(`call ${callNumber} was ${entry.op} when recorded, now it is ${op}`);
  }
  const difference = differs(entry as EntryOf<K>);
  if (difference) throw new ReplayDivergedError(`call ${callNumber} (${op}): ${difference}`);
  journal.position += 1;
  journal.recorded.push(entry);
  return entry as EntryOf<K>;
}

/** Appends a live entry; the caller may fill in its result later (a fetch keeps its call-order slot). */
export function recordEntry<E extends JournalEntry>(journal: Journal, entry: E): E {
  if (journal.recorded.length >= maxJournalEntries) {
    throw new AgentFault(`journal too long: a run may make at most ${maxJournalEntries} journaled calls (now, sleep, fetch, ask, call)`);
  }
  chargeJournal(journal, entryOverheadBytes + ('url' in entry ? entry.url.length : 0));
  journal.recorded.push(entry);
  return entry;
}

/** Counts the size of a result filled into a live entry (a fetch's response). */
export function chargeJournal(journal: Journal, bytes: number): void {
  journal.bytes += bytes;
  if (journal.bytes > maxJournalBytes) {
    throw new AgentFault(`journal too large: the recorded results of this run pass ${maxJournalBytes} bytes`);
  }
}

/** A copy of the journal as it is now, for storing with a pause. */
export function snapshotJournal(journal: Journal): JournalEntry[] {
  return structuredClone(journal.recorded);
}

/** Throws when the run ended before replaying everything the journal recorded. */
export function assertReplayFinished(journal: Journal): void {
  const left = journal.replay.length - journal.position;
  if (left > 0) throw new ReplayDivergedError(`the agent finished with ${left} journaled call(s) not replayed`);
}

/** Deep equality that ignores key order (stored journals may come back from jsonb reordered). */
export function sameJson(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(a, b);
}
