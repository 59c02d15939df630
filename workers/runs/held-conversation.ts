import type { Conversation } from '../../db/schema.js';
import type { RunChanges } from '../../runs/commit.js';

/**
 * The conversation as a hot actor holds it between two of its calls in one worker: the call that ends
 * hands the state it committed to the call waiting next in this process, which starts from it instead
 * of reading the conversation again (runs/turns.ts hands it over with the turn). Only an unpaused
 * conversation is handed over; a pause is always read back from PostgreSQL.
 *
 * Nothing but the conversation's own calls changes its state and version, and they run one at a time,
 * so what the last one committed is what a read would return. The hand-over can come as soon as the
 * call before has run, before its commit: the next call then runs while that commit is under way, as
 * a speculation (speculation.ts) that reaches nothing outside the sandbox and commits nothing until the
 * commit before it is known to have kept what it started from. The commit stays fenced by the version:
 * if the conversation was deleted meanwhile, the call keeps nothing and its caller gets 409, as when
 * the deletion comes while it runs.
 */
export interface HeldConversation {
  conversation: Conversation;
  /**
   * Handed over while the call before it still commits (the turns pipelined): settles true once that
   * commit kept this state, false when it did not (fenced, refused, failed). Absent: committed already.
   */
  committed?: Promise<boolean>;
}

/**
 * The conversation as a committed run on it left it (`paused`: it was paused when the run read it):
 * `changes` applied and its version raised, or as it was when the run kept nothing. Undefined when it
 * is left paused.
 */
export function conversationAfterRun(conversation: Conversation, paused: boolean, changes: RunChanges | undefined, now: Date): HeldConversation | undefined {
  if (!changes) return paused ? undefined : { conversation };
  if (changes.pause.kind === 'save' || (changes.pause.kind === 'keep' && paused)) return undefined;
  const { agentVars, convVars, history } = changes.state;
  return { conversation: { ...conversation, agent_vars: agentVars, conv_vars: convVars, history, last_used_at: now, version: conversation.version + 1 } };
}
