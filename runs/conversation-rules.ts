import type { HistoryEntry, Principal, ResultCode } from '../shared/api.js';
import type { RunJobData } from '../shared/jobs.js';
import { historyLimit } from '../shared/history.js';
import { retentionDays } from '../shared/retention.js';
import type { Conversation, PausedAsk } from '../db/schema.js';

/**
 * What a call must meet to run on an existing conversation (DESIGN §4): one that fails is answered
 * `unknownConversation` (run-endings.ts), the conversation left as it was.
 */

const day = 86_400_000;

/**
 * Whether the call may run on the conversation it names: the caller owns it, it has not expired, and
 * whoever paused it (if anyone) is the same agent. Otherwise the call ends `unknownConversation`.
 */
export function mayRunOn(conversation: Conversation, pause: PausedAsk | undefined, data: RunJobData, now: Date): boolean {
  if (!isOwnedBy(conversation, data.caller) || isExpired(conversation, now)) return false;
  return !pause || pausedBySameAgent(pause, data);
}

/** Whether the conversation belongs to the caller (another caller's is not revealed to exist). */
export function isOwnedBy(conversation: Conversation, caller: Principal): boolean {
  return conversation.owner_kind === caller.kind && conversation.owner_id === caller.id;
}

/** Whether the conversation has gone unused longer than its plan keeps it (a pinned one never expires). */
export function isExpired(conversation: Conversation, now: Date): boolean {
  if (conversation.pinned) return false;
  return now.getTime() - conversation.last_used_at.getTime() > retentionDays[conversation.plan] * day;
}

/** A paused conversation resumes only with the agent that paused: the same name, and the same draft or none. */
export function pausedBySameAgent(pause: PausedAsk, data: RunJobData): boolean {
  return pause.agent_name === data.agentName && (pause.draft_id ?? undefined) === data.draft?.id;
}

/** The history with one more entry (`added`, as stored), keeping the newest `historyLimit`. */
export function appendHistory(history: HistoryEntry[], entry: { agentName: string; query: string | null; resultCode: ResultCode; at: Date }): { history: HistoryEntry[]; added: HistoryEntry } {
  const added: HistoryEntry = { agentName: entry.agentName, query: entry.query, resultCode: entry.resultCode, at: entry.at.toISOString() };
  const next = [...history, added];
  return { history: next.length > historyLimit ? next.slice(next.length - historyLimit) : next, added };
}
