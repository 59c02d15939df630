import type { HistoryEntry, JsonObject, Plan, PrincipalKind } from '../shared/api.js';
import type { Db } from './database.js';
import type { Conversation, PausedAsk } from './schema.js';

/**
 * Reads the conversation with its pause, if any, and locks the conversation's row until the
 * transaction ends: runs on one conversation wait for each other here. Must be called inside a
 * transaction. One round trip.
 */
export async function lockConversation(trx: Db, id: string): Promise<{ conversation: Conversation; pause: PausedAsk | undefined } | undefined> {
  const row = await trx
    .selectFrom('conversations as c')
    .leftJoin('paused_asks as p', 'p.convid', 'c.id')
    .selectAll('c')
    .select(['p.agent_name', 'p.agent_version', 'p.draft_id', 'p.ask', 'p.journal', 'p.start_state', 'p.created_at as paused_at'])
    .where('c.id', '=', id)
    .forUpdate('c')
    .executeTakeFirst();
  if (!row) return undefined;
  const { agent_name, agent_version, draft_id, ask, journal, start_state, paused_at, ...conversation } = row;
  const pause =
    agent_name === null || agent_version === null || ask === null || journal === null || start_state === null || paused_at === null
      ? undefined
      : { convid: id, agent_name, agent_version, draft_id, ask, journal, start_state, created_at: paused_at };
  return { conversation, pause };
}

export interface NewConversation {
  id: string;
  ownerKind: PrincipalKind;
  ownerId: string;
  plan: Plan;
  now: Date;
}

export interface ConversationState {
  agentVars: Record<string, JsonObject>;
  convVars: JsonObject;
  history: HistoryEntry[];
}

/** The row of a new conversation, empty or with the state of its first run. */
export function conversationRow(conversation: NewConversation, state?: ConversationState) {
  return {
    id: conversation.id,
    owner_kind: conversation.ownerKind,
    owner_id: conversation.ownerId,
    plan: conversation.plan,
    agent_vars: JSON.stringify(state?.agentVars ?? {}),
    conv_vars: JSON.stringify(state?.convVars ?? {}),
    history: JSON.stringify(state?.history ?? []),
    created_at: conversation.now,
    last_used_at: conversation.now,
  };
}

export async function updateConversationState(trx: Db, id: string, state: ConversationState, now: Date): Promise<void> {
  await trx
    .updateTable('conversations')
    .set({
      agent_vars: JSON.stringify(state.agentVars),
      conv_vars: JSON.stringify(state.convVars),
      history: JSON.stringify(state.history),
      last_used_at: now,
    })
    .where('id', '=', id)
    .execute();
}

export async function touchConversation(trx: Db, id: string, now: Date): Promise<void> {
  await trx.updateTable('conversations').set({ last_used_at: now }).where('id', '=', id).execute();
}

export async function findConversation(db: Db, id: string): Promise<Conversation | undefined> {
  return db.selectFrom('conversations').selectAll().where('id', '=', id).executeTakeFirst();
}
