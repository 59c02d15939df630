import type { Db } from '../db/database.js';
import { recordFirstRuns, type FirstRun } from '../db/run-commit.repository.js';

/**
 * Writes first runs' records (new conversations), grouping the ones that end in the same turn of the
 * event loop into one statement: at 64 calls in flight a statement a run was most of what the worker
 * spent on PostgreSQL. A group that fails is written again one run at a time, so each run gets its own
 * outcome (the execution record of one given up by its caller fails that one alone, runs/commit.ts).
 */
export interface FirstRunWriter {
  write(run: FirstRun): Promise<void>;
}

interface Pending {
  run: FirstRun;
  settle: (err?: unknown) => void;
}

/** Runs written in one statement at most: a bound on its size. */
const maxGroup = 100;

export function createFirstRunWriter(db: Db): FirstRunWriter {
  let pending: Pending[] = [];

  const writeAlone = ({ run, settle }: Pending) => recordFirstRuns(db, [run]).then(() => settle(), settle);

  const flush = async () => {
    const group = pending.splice(0, maxGroup);
    if (pending.length > 0) setImmediate(flush);
    if (group.length === 1) return writeAlone(group[0]!);
    try {
      await recordFirstRuns(db, group.map((each) => each.run));
      for (const each of group) each.settle();
    } catch {
      await Promise.all(group.map(writeAlone));
    }
  };

  return {
    write(run) {
      return new Promise<void>((resolve, reject) => {
        if (pending.length === 0) setImmediate(flush);
        pending.push({ run, settle: (err) => (err === undefined ? resolve() : reject(err)) });
      });
    },
  };
}
