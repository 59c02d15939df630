import type { HistoryEntry, JsonObject, Plan, PrincipalKind } from '../shared/api.js';
import type { Db } from './database.js';
import type { Conversation, PausedAsk } from './schema.js';

/**
 * Reads the conversation with its pause, if any, in one round trip and without a lock: a run commits
 * only if the conversation's version is still the one read here (commitConversationState).
 */
export async function readConversation(db: Db, id: string): Promise<{ conversation: Conversation; pause: PausedAsk | undefined } | undefined> {
  const row = await db
    .selectFrom('conversations as c')
    .leftJoin('paused_asks as p', 'p.convid', 'c.id')
    .selectAll('c')
    .select(['p.agent_name', 'p.agent_version', 'p.draft_id', 'p.ask', 'p.journal', 'p.start_state', 'p.created_at as paused_at'])
    .where('c.id', '=', id)
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

/**
 * Writes a run's state where the conversation is still at the version the run read, raising it by
 * one. False when it is not (DESIGN §11: a stale writer changes nothing).
 */
export async function commitConversationState(trx: Db, id: string, version: number, state: ConversationState, now: Date): Promise<boolean> {
  const result = await trx
    .updateTable('conversations')
    .set((eb) => ({
      agent_vars: JSON.stringify(state.agentVars),
      conv_vars: JSON.stringify(state.convVars),
      history: JSON.stringify(state.history),
      last_used_at: now,
      version: eb('version', '+', 1),
    }))
    .where('id', '=', id)
    .where('version', '=', version)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

export async function touchConversation(trx: Db, id: string, now: Date): Promise<void> {
  await trx.updateTable('conversations').set({ last_used_at: now }).where('id', '=', id).execute();
}

export async function findConversation(db: Db, id: string): Promise<Conversation | undefined> {
  return db.selectFrom('conversations').selectAll().where('id', '=', id).executeTakeFirst();
}
