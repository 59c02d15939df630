import { sql } from 'kysely';
import type { HistoryEntry, JsonObject, Plan, PrincipalKind } from '../shared/api.js';
import { historyLimit } from '../shared/history.js';
import { lockTimeoutCondition, type Db } from './database.js';
import type { Conversation, PausedAsk } from './schema.js';

/** A conversation as a run reads it: with its pause, and the latest published version of the agent called. */
export interface ConversationRead {
  conversation: Conversation;
  pause: PausedAsk | undefined;
  /** Latest published version of `latestOf`; undefined when none is published or none was asked for. */
  latestVersion: number | undefined;
}

/** One conversation a run reads, and the agent whose latest published version it needs (none for a draft). */
export interface ConversationReadRequest {
  id: string;
  latestOf?: string;
}

/**
 * Reads conversations with their pauses, if any, and the latest version of each request's agent
 * `latestOf` (a run's first statement), in one round trip and without a lock: a run commits only if
 * the conversation's version is still the one read here (run-commit.repository.ts). The reads of runs
 * starting together share the statement (runs/conversation-reader.ts). Answers in the order asked,
 * undefined for a conversation that does not exist.
 */
export async function readConversations(db: Db, requests: readonly ConversationReadRequest[]): Promise<Array<ConversationRead | undefined>> {
  if (requests.length === 0) return [];
  const ids = requests.map((request) => request.id);
  const agents = requests.map((request) => request.latestOf ?? null);
  const { rows } = await sql<ReadRow>`
    select c.*, p.agent_name, p.agent_version, p.draft_id, p.ask, p.journal, p.start_state, p.created_at as paused_at, a.latest_version, r.n
    from unnest(${ids}::uuid[], ${agents}::text[]) with ordinality as r(id, latest_of, n)
    join conversations c on c.id = r.id
    left join paused_asks p on p.convid = c.id
    left join agents a on a.name = r.latest_of`.execute(db);
  const read: Array<ConversationRead | undefined> = requests.map(() => undefined);
  for (const row of rows) read[Number(row.n) - 1] = conversationReadOf(row);
  return read;
}

type ReadRow = Conversation & {
  agent_name: string | null;
  agent_version: number | null;
  draft_id: string | null;
  ask: PausedAsk['ask'] | null;
  journal: PausedAsk['journal'] | null;
  start_state: PausedAsk['start_state'] | null;
  paused_at: Date | null;
  latest_version: number | null;
  /** The request's place in the batch, from 1 (a bigint, so text). */
  n: string;
};

function conversationReadOf(row: ReadRow): ConversationRead {
  const { agent_name, agent_version, draft_id, ask, journal, start_state, paused_at, latest_version, n: _n, ...conversation } = row;
  const pause =
    agent_name === null || agent_version === null || ask === null || journal === null || start_state === null || paused_at === null
      ? undefined
      : { convid: conversation.id, agent_name, agent_version, draft_id, ask, journal, start_state, created_at: paused_at };
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
 * sends one entry, not up to 500. The prepared commit statements append it the same way
 * (run-commit.repository.ts, historyAppended).
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

/** Marks the conversation used at `now`; `lockTimeout` (lockTimeoutOf the Db that opened `trx`) bounds the wait for its row. */
export async function touchConversation(trx: Db, id: string, now: Date, lockTimeout: string | null): Promise<void> {
  await trx.updateTable('conversations').set({ last_used_at: now }).where('id', '=', id).where(lockTimeoutCondition(lockTimeout)).execute();
}

export async function findConversation(db: Db, id: string): Promise<Conversation | undefined> {
  return db.selectFrom('conversations').selectAll().where('id', '=', id).executeTakeFirst();
}
