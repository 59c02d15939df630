import type { RunJobData } from '../shared/jobs.js';
import type { Db } from '../db/database.js';
import { recordConsecutiveRuns } from '../db/run-commit.repository.js';
import { commitRun, conversationRun, type RunChanges, type RunRecord } from './commit.js';
import { createConversationRunWriter } from './conversation-run-writer.js';
import { baseNotKept, conversationChanged, type RunAgain, type RunEnding } from './run-endings.js';

/**
 * The commits of a busy conversation's calls in one worker, in the order the conversation was handed
 * from call to call (the hot actor, workers/runs/held-conversation.ts). A call handed the conversation
 * before the call ahead of it has committed runs at once, and its commit queues behind that one's. While
 * a commit is under way the next ones gather; those that only change the conversation's state then go
 * out together, in one statement (a group commit): a conversation's calls are no longer as slow as one
 * commit each, one after the other.
 *
 * A commit goes out only once what its run started from is known to be kept (`base`); otherwise the
 * run is to run again (RunAgain `baseNotKept`): nothing of it is kept, and its call runs again from what is there.
 */
export interface ConversationCommits {
  commit(run: ChainedRun): Promise<RunEnding | RunAgain>;
}

export interface ChainedRun {
  data: RunJobData;
  /** The conversation's version the run started from. */
  version: number;
  changes: RunChanges | undefined;
  record: RunRecord;
  /** Settles true once the state the run started from is committed; absent when the run read it from PostgreSQL. Never rejects. */
  base?: Promise<boolean>;
}

interface Queued extends ChainedRun {
  settle(outcome: Promise<RunEnding | RunAgain>): void;
}

/** Most runs one group commit writes (each a record of some twenty values). */
const maxGroup = 50;

export function createConversationCommits(db: Db): ConversationCommits {
  /** convid → commits waiting; present while its commits are being written. */
  const queues = new Map<string, Queued[]>();
  const runs = createConversationRunWriter(db);

  const alone = (run: Queued): Promise<unknown> => {
    const outcome = commitRun(db, runs, run.data, run.version, run.changes, run.record);
    run.settle(outcome);
    return outcome.catch(() => undefined);
  };

  const writeAll = async (convid: string, queue: Queued[]): Promise<void> => {
    for (let first = queue[0]; first; first = queue[0]) {
      if (first.base && !(await first.base)) {
        queue.shift();
        first.settle(Promise.resolve(baseNotKept()));
        continue;
      }
      const group = groupable(queue);
      if (group.length < 2) {
        queue.shift();
        await alone(first);
        continue;
      }
      queue.splice(0, group.length);
      const kept = await recordConsecutiveRuns(db, group.map((run) => conversationRun(run.data, run.version, run.changes!, run.record))).catch(() => 'failed' as const);
      if (kept === 'committed') {
        for (const run of group) run.settle(Promise.resolve({ kind: 'response', response: run.record.response }));
      } else if (kept === 'stale') {
        // Another writer moved the conversation on: the first is told so, the others started from it.
        first.settle(Promise.resolve(conversationChanged()));
        queue.unshift(...group.slice(1));
      } else {
        // Which run failed it (a record already there, PostgreSQL gone) is found by writing the first alone.
        queue.unshift(...group.slice(1));
        await alone(first);
      }
    }
    queues.delete(convid);
  };

  return {
    commit(run) {
      return new Promise<RunEnding | RunAgain>((resolve, reject) => {
        const queued: Queued = { ...run, settle: (outcome) => void outcome.then(resolve, reject) };
        const convid = run.data.convid;
        const queue = queues.get(convid);
        if (queue) return void queue.push(queued);
        const started = [queued];
        queues.set(convid, started);
        void writeAll(convid, started);
      });
    },
  };
}

/**
 * The commits at the head of the queue that can be written as one: each changes the state, leaves the
 * pause as it is, and started from the state the one before it left.
 */
function groupable(queue: readonly Queued[]): Queued[] {
  const group: Queued[] = [];
  for (const run of queue) {
    const first = group[0];
    if (group.length === maxGroup || run.changes?.pause.kind !== 'keep') break;
    if (first && (!run.base || run.version !== first.version + group.length)) break;
    group.push(run);
  }
  return group;
}
