import type { Db } from '../db/database.js';
import { recordConversationRun, recordRunsOnConversations, type ConversationRun } from '../db/run-commit.repository.js';
import { groupedWrites, type WriteOutcome } from './grouped-writes.js';

/**
 * Writes the commits of runs on existing conversations. Those that end in the same turn of the event
 * loop, each on a conversation of its own and leaving its pause as it is, share one prepared statement
 * that updates their conversations, each fenced by the version its run read (grouped-writes.ts): a
 * worker holding hundreds of waiting runs, or a mixed load, has many conversations busy at once. A
 * group that fails, or keeps nothing because one of its conversations moved on, is written again run
 * by run, so each gets its own outcome.
 */
export interface ConversationRunWriter {
  write(run: ConversationRun): Promise<WriteOutcome>;
}

/** Runs written in one statement at most (each a fenced update of its own). */
const maxGroup = 50;

export function createConversationRunWriter(db: Db): ConversationRunWriter {
  const write = groupedWrites<ConversationRun>({
    alone: (run) => recordConversationRun(db, run),
    together: (runs) => recordRunsOnConversations(db, runs),
    maxGroup,
    fits: (run) => run.pause.kind === 'keep',
    key: (run) => run.convid,
  });
  return { write };
}
