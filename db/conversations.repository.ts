import type { HistoryEntry, JsonObject, Plan, PrincipalKind } from '../shared/api.js';
import type { Db } from './database.js';
import type { Conversation } from './schema.js';

/**
 * Reads the conversation and locks its row until the transaction ends: runs on one conversation
 * wait for each other here. Must be called inside a transaction.
 */
export async function lockConversation(trx: Db, id: string): Promise<Conversation | undefined> {
  return trx.selectFrom('conversations').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
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

/** Creates a conversation, empty or with the state of its first run. */
export async function insertConversation(trx: Db, conversation: NewConversation, state?: ConversationState): Promise<void> {
  await trx
    .insertInto('conversations')
    .values({
      id: conversation.id,
      owner_kind: conversation.ownerKind,
      owner_id: conversation.ownerId,
      plan: conversation.plan,
      agent_vars: JSON.stringify(state?.agentVars ?? {}),
      conv_vars: JSON.stringify(state?.convVars ?? {}),
      history: JSON.stringify(state?.history ?? []),
      created_at: conversation.now,
      last_used_at: conversation.now,
    })
    .execute();
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
