import type { Db } from '../db/database.js';
import { recordFirstRuns, type FirstRun } from '../db/run-commit.repository.js';
import { batchPerTurn } from './per-turn-batch.js';

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

interface Pending {
  run: FirstRun;
  resolve: (outcome: 'committed' | 'stale') => void;
  reject: (err: unknown) => void;
}

/** Runs written in one statement at most: a bound on its size. */
const maxGroup = 100;

export function createFirstRunWriter(db: Db): FirstRunWriter {
  const writeAlone = ({ run, resolve, reject }: Pending) => recordFirstRuns(db, [run]).then(resolve, reject);

  const writeGroup = async (group: Pending[]) => {
    if (group.length === 1) return writeAlone(group[0]!);
    const outcome = await recordFirstRuns(db, group.map((each) => each.run)).catch(() => 'failed' as const);
    if (outcome === 'committed') for (const each of group) each.resolve(outcome);
    else await Promise.all(group.map(writeAlone));
  };

  const enqueue = batchPerTurn<Pending>((batch) => {
    for (let i = 0; i < batch.length; i += maxGroup) void writeGroup(batch.slice(i, i + maxGroup));
  });

  return {
    write: (run) => new Promise((resolve, reject) => enqueue({ run, resolve, reject })),
  };
}
