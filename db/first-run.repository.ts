import type { Db } from './database.js';
import { conversationRow, type ConversationState, type NewConversation } from './conversations.repository.js';
import { pauseRow, type NewPause } from './paused-asks.repository.js';
import type { NewExecution } from './schema.js';

/** What the first run of a new conversation leaves: the conversation, its pause if it asked, its execution record. */
export interface FirstRun {
  conversation: NewConversation;
  /** Undefined when the run kept nothing (the conversation starts empty). */
  state?: ConversationState;
  pause?: NewPause;
  execution: NewExecution;
}

/**
 * Writes a new conversation's first run in one statement: data-modifying CTEs run in the statement's
 * single transaction, so the three rows are committed together or not at all, in one round trip.
 * Nobody else can hold the conversation yet, so no lock is needed before.
 */
export async function recordFirstRun(db: Db, run: FirstRun): Promise<void> {
  const withConversation = db.with('conversation', (q) => q.insertInto('conversations').values(conversationRow(run.conversation, run.state)).returning('id'));
  const pause = run.pause;
  if (!pause) return void (await withConversation.insertInto('executions').values(run.execution).execute());
  await withConversation
    .with('pause', (q) => q.insertInto('paused_asks').values(pauseRow(pause)).returning('convid'))
    .insertInto('executions')
    .values(run.execution)
    .execute();
}
