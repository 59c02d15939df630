import type { HistoryEntry, Principal, ResultCode } from '../../shared/api.js';
import { retentionDays } from '../../shared/retention.js';
import type { Conversation } from '../../db/schema.js';

const day = 86_400_000;

/** Prompt history keeps this many entries, the newest. */
export const historyLimit = 500;

export function isOwnedBy(conversation: Conversation, caller: Principal): boolean {
  return conversation.owner_kind === caller.kind && conversation.owner_id === caller.id;
}

export function isExpired(conversation: Conversation, now: Date): boolean {
  if (conversation.pinned) return false;
  return now.getTime() - conversation.last_used_at.getTime() > retentionDays[conversation.plan] * day;
}

export function appendHistory(history: HistoryEntry[], entry: { agentName: string; query: string | null; resultCode: ResultCode; at: Date }): HistoryEntry[] {
  const next = [...history, { agentName: entry.agentName, query: entry.query, resultCode: entry.resultCode, at: entry.at.toISOString() }];
  return next.length > historyLimit ? next.slice(next.length - historyLimit) : next;
}
