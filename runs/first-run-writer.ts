import type { Db } from '../db/database.js';
import { recordFirstRuns, type FirstRun } from '../db/run-commit.repository.js';
import { groupedWrites } from './grouped-writes.js';

/**
 * Writes first runs' records (new conversations), grouping the ones that end in the same turn of the
 * event loop into one statement: at 64 calls in flight a statement a run was most of what the worker
 * spent on PostgreSQL. A group that fails, or keeps nothing because one of its runs is stale (its agent
 * has a newer version than the one it ran), is written again one run at a time, so each run gets its
 * own outcome (the execution record of one given up by its caller fails that one alone, runs/commit.ts).
 */
export interface FirstRunWriter {
  write(run: FirstRun): Promise<'committed' | 'stale'>;
}

/** Runs written in one statement at most: a bound on its size. */
const maxGroup = 100;

/**
 * `flushLater`: each run is written alone, its commit not waiting for the WAL's flush (FirstRun.flushLater):
 * for runs whose durability a later commit that depends on them makes (a worker's children run in it).
 */
export function createFirstRunWriter(db: Db, { flushLater = false }: { flushLater?: boolean } = {}): FirstRunWriter {
  if (flushLater) return { write: (run) => recordFirstRuns(db, [{ ...run, flushLater: true }]) };
  // Two runs with one Idempotency-Key (a call and its retry) never share a statement: one would fail the other's group.
  const key = (run: FirstRun) => (run.claim ? `${run.claim.principal_kind}:${run.claim.principal_id}:${run.claim.key}` : undefined);
  const write = groupedWrites<FirstRun>({ alone: (run) => recordFirstRuns(db, [run]), together: (runs) => recordFirstRuns(db, runs), maxGroup, key });
  return { write };
}
