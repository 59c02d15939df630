import type { Db } from '../db/database.js';
import { recordConversationRun, recordRunsOnConversations, type ConversationRun } from '../db/run-commit.repository.js';
import { batchPerTurn } from './per-turn-batch.js';

/**
 * Writes the commits of runs on existing conversations, grouping those that end in the same turn of
 * the event loop, each on a conversation of its own and leaving its pause as it is, into one statement:
 * with many conversations busy at once (a worker holding hundreds of waiting runs, a mixed load) a
 * statement a run was a round trip, a wake-up of a PostgreSQL backend and a WAL flush each. A group
 * that fails, or keeps nothing because one of its conversations moved on, is written again one run at
 * a time, so each run gets its own outcome ('stale' for that one, its error for a record already there).
 */
export interface ConversationRunWriter {
  write(run: ConversationRun): Promise<'committed' | 'stale'>;
}

interface Pending {
  run: ConversationRun;
  resolve: (outcome: 'committed' | 'stale') => void;
  reject: (err: unknown) => void;
}

/** Runs written in one statement at most (each a fenced update of its own): a bound on its size. */
const maxGroup = 50;

export function createConversationRunWriter(db: Db): ConversationRunWriter {
  const writeAlone = ({ run, resolve, reject }: Pending) => recordConversationRun(db, run).then(resolve, reject);

  const writeGroup = async (group: Pending[]) => {
    if (group.length === 1) return writeAlone(group[0]!);
    const outcome = await recordRunsOnConversations(db, group.map((each) => each.run)).catch(() => 'failed' as const);
    if (outcome === 'committed') for (const each of group) each.resolve(outcome);
    else await Promise.all(group.map(writeAlone));
  };

  const enqueue = batchPerTurn<Pending>((batch) => {
    const { groupable, alone } = splitGroupable(batch);
    for (const each of alone) void writeAlone(each);
    for (let i = 0; i < groupable.length; i += maxGroup) void writeGroup(groupable.slice(i, i + maxGroup));
  });

  return {
    write: (run) => new Promise((resolve, reject) => enqueue({ run, resolve, reject })),
  };
}

/** The runs that may share a statement (pause kept, the first of their conversation in the batch) and the rest. */
function splitGroupable(batch: readonly Pending[]): { groupable: Pending[]; alone: Pending[] } {
  const groupable: Pending[] = [];
  const alone: Pending[] = [];
  const conversations = new Set<string>();
  for (const each of batch) {
    const fits = each.run.pause.kind === 'keep' && !conversations.has(each.run.convid);
    (fits ? groupable : alone).push(each);
    if (fits) conversations.add(each.run.convid);
  }
  return { groupable, alone };
}
