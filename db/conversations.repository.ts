import { sql } from 'kysely';
import type { HistoryEntry, JsonObject, Plan, PrincipalKind } from '../shared/api.js';
import { historyLimit } from '../shared/history.js';
import type { Db } from './database.js';
import type { Conversation, PausedAsk } from './schema.js';

/** A conversation as a run reads it: with its pause, and the latest published version of the agent called. */
export interface ConversationRead {
  conversation: Conversation;
  pause: PausedAsk | undefined;
  /** Latest published version of `latestOf`; undefined when none is published or none was asked for. */
  latestVersion: number | undefined;
}

/**
 * Reads the conversation with its pause, if any, and the latest version of the agent `latestOf` (a
 * run's first statement), in one round trip and without a lock: a run commits only if the
 * conversation's version is still the one read here (run-commit.repository.ts).
 */
export async function readConversation(db: Db, id: string, latestOf?: string): Promise<ConversationRead | undefined> {
  const row = await db
    .selectFrom('conversations as c')
    .leftJoin('paused_asks as p', 'p.convid', 'c.id')
    .selectAll('c')
    .select(['p.agent_name', 'p.agent_version', 'p.draft_id', 'p.ask', 'p.journal', 'p.start_state', 'p.created_at as paused_at'])
    .select((eb) => eb.selectFrom('agents').select('latest_version').where('name', '=', latestOf ?? null).as('latest_version'))
    .where('c.id', '=', id)
    .executeTakeFirst();
  if (!row) return undefined;
  const { agent_name, agent_version, draft_id, ask, journal, start_state, paused_at, latest_version, ...conversation } = row;
  const pause =
    agent_name === null || agent_version === null || ask === null || journal === null || start_state === null || paused_at === null
      ? undefined
      : { convid: id, agent_name, agent_version, draft_id, ask, journal, start_state, created_at: paused_at };
  return { conversation, pause, latestVersion: latest_version ?? undefined };
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
  /** The whole history after the run: the history it read with `added` at its end, the oldest dropped past the limit. */
  history: HistoryEntry[];
  /** The one entry the run added. */
  added: HistoryEntry;
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
 * The columns a run's kept state writes over the conversation it read (the commit is fenced by the
 * version read, so the stored history is the one the run started from). The history gets the run's
 * entry appended where it is stored, the oldest dropped at the limit: a long conversation's commit
 * sends one entry, not up to 500.
 */
export function conversationStateValues(state: ConversationState) {
  const added = sql<string>`jsonb_build_array(${JSON.stringify(state.added)}::jsonb)`;
  return {
    agent_vars: JSON.stringify(state.agentVars),
    conv_vars: JSON.stringify(state.convVars),
    history: sql<string>`case when jsonb_array_length(history) >= ${historyLimit} then (history - 0) || ${added} else history || ${added} end`,
  };
}

/**
 * The columns several consecutive runs' kept states write over the conversation the first of them read
 * (a group commit, run-commit.repository.ts): the last one's variables, and every run's history entry
 * appended in order, the oldest dropped at the limit.
 */
export function consecutiveStatesValues(states: readonly ConversationState[]) {
  const last = states[states.length - 1]!;
  const added = JSON.stringify(states.map((state) => state.added));
  const newest = `$[last - ${historyLimit - 1} to last]`;
  return {
    agent_vars: JSON.stringify(last.agentVars),
    conv_vars: JSON.stringify(last.convVars),
    history: sql<string>`jsonb_path_query_array(history || ${added}::jsonb, ${newest}::jsonpath)`,
  };
}

export async function touchConversation(trx: Db, id: string, now: Date): Promise<void> {
  await trx.updateTable('conversations').set({ last_used_at: now }).where('id', '=', id).execute();
}

export async function findConversation(db: Db, id: string): Promise<Conversation | undefined> {
  return db.selectFrom('conversations').selectAll().where('id', '=', id).executeTakeFirst();
}
