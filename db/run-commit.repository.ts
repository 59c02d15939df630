import { sql, type QueryCreator } from 'kysely';
import { historyLimit } from '../shared/history.js';
import { executePrepared, lockTimeoutCondition, lockTimeoutOf, withLockTimeout, type Db } from './database.js';
import { consecutiveStatesValues, conversationRow, conversationStateValues, type ConversationState, type NewConversation } from './conversations.repository.js';
import { pauseRow, pauseValues, type NewPause } from './paused-asks.repository.js';
import type { Database, NewExecution, NewIdempotencyKey } from './schema.js';

/** What the first run of a new conversation leaves: the conversation, its pause if it asked, its execution record. */
export interface FirstRun {
  conversation: NewConversation;
  /** Undefined when the run kept nothing (the conversation starts empty). */
  state?: ConversationState;
  pause?: NewPause;
  execution: NewExecution;
  /**
   * The agent version the run started on without reading it first: the run is kept only where that is
   * still the agent's latest version when the statement runs.
   */
  fence?: { agentName: string; version: number };
  /**
   * Its commit need not wait for the WAL's flush (synchronous_commit off for its transaction): a run
   * whose effect is made durable by a later commit that depends on it (a child run in its parent's
   * worker, DESIGN §19: the WAL is flushed in order, so the parent's own commit, or its end recorded by
   * another process, flushes the child's first). Honoured for a run written alone without a pause.
   */
  flushLater?: boolean;
  /**
   * The record of the call's Idempotency-Key (a short run answered by the web process, DESIGN §4),
   * written in the same statement: a live record of the key already there fails it whole with the
   * key's unique violation (idempotency_keys_pkey), which the caller maps.
   */
  claim?: NewIdempotencyKey;
}

/**
 * Writes new conversations' first runs in one statement: data-modifying CTEs run in the statement's
 * single transaction, so all their rows are committed together or not at all, in one round trip.
 * Nobody else can hold a new conversation yet, so no lock is needed before. A fenced run whose agent
 * has a newer version makes the statement keep nothing: 'stale'. The fence is the conversation's id,
 * given only while the version is the latest: otherwise it is null, and the id's not-null constraint
 * fails the statement whole.
 */
export async function recordFirstRuns(db: Db, runs: readonly FirstRun[]): Promise<'committed' | 'stale'> {
  if (runs.length === 0) return 'committed';
  const [only] = runs;
  if (runs.length === 1 && !only!.pause) return recordFirstRun(db, only!);
  if (!runs.some((run) => run.pause)) return recordFirstRunsTogether(db, runs);
  const claims = runs.flatMap((run) => (run.claim ? [run.claim] : []));
  // The claims first, when there are any (a CTE that writes runs whether or not it is read).
  const start = claims.length === 0 ? db : (db.with('claim', (q) => q.insertInto('idempotency_keys').values(claims).returning('key')) as unknown as QueryCreator<Database>);
  const withConversations = start.with('conversation', (q) =>
    q
      .insertInto('conversations')
      .values(runs.map((run) => ({ ...conversationRow(run.conversation, run.state), ...(run.fence ? { id: fencedId(run.conversation.id, run.fence) } : {}) })))
      .returning('id'),
  );
  const executions = runs.map((run) => run.execution);
  const pauses = runs.flatMap((run) => (run.pause ? [pauseRow(run.pause)] : []));
  const statement =
    pauses.length === 0
      ? withConversations.insertInto('executions').values(executions)
      : withConversations
          .with('pause', (q) => q.insertInto('paused_asks').values(pauses).returning('convid'))
          .insertInto('executions')
          .values(executions);
  return executeFenced(statement, 'conversations', 'id');
}

const conversationColumns = ['id', 'owner_kind', 'owner_id', 'plan', 'agent_vars', 'conv_vars', 'history', 'created_at', 'last_used_at'] as const;
const executionColumns = [
  'id',
  'convid',
  'agent_name',
  'agent_version',
  'draft_id',
  'principal_kind',
  'principal_id',
  'request_id',
  'result_code',
  'error_message',
  'response',
  'query',
  'submitted_at',
  'background',
  'started_at',
  'finished_at',
  'duration_ms',
  'timeline',
  'trace_id',
  'parent_run_id',
] as const;

/** `$from, …` for `count` parameters. */
function placeholders(from: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `$${from + i}`);
}

/** The columns of an Idempotency-Key's record, as a first run's statement writes it. */
const claimColumns = ['principal_kind', 'principal_id', 'key', 'run_id', 'convid', 'agent_name', 'fingerprint', 'created_at'] as const;
const claimTypes: Record<(typeof claimColumns)[number], string> = {
  principal_kind: 'text',
  principal_id: 'uuid',
  key: 'text',
  run_id: 'uuid',
  convid: 'uuid',
  agent_name: 'text',
  fingerprint: 'text',
  created_at: 'timestamptz',
};

/**
 * One first run that keeps no pause, as recordFirstRuns writes it, in a prepared statement
 * (executePrepared): most first runs end alone (one call at a time) or this way. Its parameters are the
 * conversation's columns, the record's, the fence's agent name and version (when fenced), then the
 * Idempotency-Key's record (when keyed); the fenced statement gives the conversation its id only while
 * that version is the latest, as fencedId does.
 */
const firstRunStatement = (() => {
  const conversation = placeholders(1, conversationColumns.length);
  const execution = placeholders(conversationColumns.length + 1, executionColumns.length);
  const insertExecution = `insert into executions (${executionColumns.join(', ')}) values (${execution.join(', ')})`;
  const insertConversation = (id: string) => `insert into conversations (${conversationColumns.join(', ')}) values (${[id, ...conversation.slice(1)].join(', ')}) returning id`;
  // Always true; evaluated once, it sets synchronous_commit off for the statement's transaction (FirstRun.flushLater).
  const flushLater = `(select set_config('synchronous_commit', 'off', true)) is not null`;
  const made = new Map<string, { name: string; text: string }>();
  return (fenced: boolean, late: boolean, keyed: boolean) => {
    const name = `record-first-run${fenced ? '-fenced' : ''}${late ? '-flush-later' : ''}${keyed ? '-keyed' : ''}`;
    let statement = made.get(name);
    if (statement) return statement;
    const fence = placeholders(conversationColumns.length + executionColumns.length + 1, 2);
    const claim = placeholders(conversationColumns.length + executionColumns.length + (fenced ? 2 : 0) + 1, claimColumns.length);
    // The conversation's id: given only while the fence's version is the latest, when fenced.
    const where = [...(fenced ? [`name = ${fence[0]} and latest_version = ${fence[1]}`] : []), ...(late ? [flushLater] : [])].join(' and ');
    const id = !fenced && !late ? conversation[0]! : `(select ${conversation[0]}::uuid${fenced ? ' from agents' : ''} where ${where})`;
    const claimCte = keyed ? `claim as (insert into idempotency_keys (${claimColumns.join(', ')}) values (${claim.join(', ')})), ` : '';
    statement = { name, text: `with ${claimCte}conversation as (${insertConversation(id)}) ${insertExecution}` };
    made.set(name, statement);
    return statement;
  };
})();

async function recordFirstRun(db: Db, run: FirstRun): Promise<'committed' | 'stale'> {
  const { conversation, execution } = firstRunRows(run);
  const values = [...conversationColumns.map((column) => conversation[column]), ...executionColumns.map((column) => execution[column])];
  const { name, text } = firstRunStatement(run.fence !== undefined, run.flushLater === true, run.claim !== undefined);
  if (run.fence) values.push(run.fence.agentName, run.fence.version);
  if (run.claim) values.push(...claimColumns.map((column) => run.claim![column]));
  return executeFenced({ execute: () => executePrepared(db, name, text, values) }, 'conversations', 'id');
}

/** A first run's conversation row and execution record, every column given (null where the record has none). */
function firstRunRows(run: FirstRun) {
  return { conversation: conversationRow(run.conversation, run.state), execution: executionValues(run.execution) };
}

/** An execution record with every column given, as a statement of its own writes it: null where the record has none, `background` false. */
function executionValues(record: NewExecution): Record<(typeof executionColumns)[number], unknown> {
  const given = { ...record, background: record.background ?? false };
  return Object.fromEntries(executionColumns.map((column) => [column, given[column] ?? null])) as Record<(typeof executionColumns)[number], unknown>;
}

/** The SQL types of the columns, for the arrays the group statement unnests. */
const conversationTypes: Record<(typeof conversationColumns)[number], string> = {
  id: 'uuid',
  owner_kind: 'text',
  owner_id: 'uuid',
  plan: 'text',
  agent_vars: 'jsonb',
  conv_vars: 'jsonb',
  history: 'jsonb',
  created_at: 'timestamptz',
  last_used_at: 'timestamptz',
};
const executionTypes: Record<(typeof executionColumns)[number], string> = {
  id: 'uuid',
  convid: 'uuid',
  agent_name: 'text',
  agent_version: 'int',
  draft_id: 'uuid',
  principal_kind: 'text',
  principal_id: 'uuid',
  request_id: 'text',
  result_code: 'text',
  error_message: 'text',
  response: 'jsonb',
  query: 'text',
  submitted_at: 'timestamptz',
  background: 'boolean',
  started_at: 'timestamptz',
  finished_at: 'timestamptz',
  duration_ms: 'int',
  timeline: 'jsonb',
  trace_id: 'text',
  parent_run_id: 'uuid',
};

/**
 * First runs that keep no pause, several in one statement (recordFirstRuns): each column is one array
 * parameter, unnested into rows, so the statement's text is the same for any number of runs and is
 * prepared once per connection, instead of built, compiled and planned afresh for each group. Its
 * parameters are the conversations' columns, the fences' agent names and versions (null for a run
 * without one), then the records' columns. A fenced run's conversation gets its id only while the
 * version is its agent's latest, as fencedId does.
 */
const firstRunsTogetherStatements = (() => {
  const conversationArrays = conversationColumns.map((column, i) => `$${i + 1}::${conversationTypes[column]}[]`);
  const fence = [conversationColumns.length + 1, conversationColumns.length + 2];
  const executionArrays = executionColumns.map((column, i) => `$${conversationColumns.length + 3 + i}::${executionTypes[column]}[]`);
  const claimArrays = claimColumns.map((column, i) => `$${conversationColumns.length + 3 + executionColumns.length + i}::${claimTypes[column]}[]`);
  const id = `case when r.fence_agent is null then r.id else (select r.id from agents a where a.name = r.fence_agent and a.latest_version = r.fence_version) end`;
  const rest = conversationColumns.slice(1).map((column) => `r.${column}`);
  const body =
    `conversation as (insert into conversations (${conversationColumns.join(', ')}) ` +
    `select ${[id, ...rest].join(', ')} from unnest(${[...conversationArrays, `$${fence[0]}::text[]`, `$${fence[1]}::int[]`].join(', ')}) ` +
    `as r(${[...conversationColumns, 'fence_agent', 'fence_version'].join(', ')}) returning id) ` +
    `insert into executions (${executionColumns.join(', ')}) select * from unnest(${executionArrays.join(', ')})`;
  // Keyed: the runs' Idempotency-Key records too, null for a run without one.
  const claim =
    `claim as (insert into idempotency_keys (${claimColumns.join(', ')}) ` +
    `select * from unnest(${claimArrays.join(', ')}) as c(${claimColumns.join(', ')}) where c.key is not null), `;
  return { plain: { name: 'record-first-runs-together', text: `with ${body}` }, keyed: { name: 'record-first-runs-together-keyed', text: `with ${claim}${body}` } };
})();

async function recordFirstRunsTogether(db: Db, runs: readonly FirstRun[]): Promise<'committed' | 'stale'> {
  const rows = runs.map(firstRunRows);
  const keyed = runs.some((run) => run.claim);
  const values = [
    ...conversationColumns.map((column) => rows.map((row) => row.conversation[column])),
    runs.map((run) => run.fence?.agentName ?? null),
    runs.map((run) => run.fence?.version ?? null),
    ...executionColumns.map((column) => rows.map((row) => row.execution[column])),
    ...(keyed ? claimColumns.map((column) => runs.map((run) => run.claim?.[column] ?? null)) : []),
  ];
  const { name, text } = keyed ? firstRunsTogetherStatements.keyed : firstRunsTogetherStatements.plain;
  return executeFenced({ execute: () => executePrepared(db, name, text, values) }, 'conversations', 'id');
}

/** The conversation's id while `fence.version` is its agent's latest version; null otherwise. */
function fencedId(id: string, fence: { agentName: string; version: number }) {
  return sql<string>`(select ${id}::uuid from agents where name = ${fence.agentName} and latest_version = ${fence.version})`;
}

/** What a run on an existing conversation leaves: its state, a pause to save or to delete, its execution record. */
export interface ConversationRun {
  convid: string;
  /** The conversation's version as the run read it: the fence. */
  version: number;
  state: ConversationState;
  pause: { kind: 'save'; pause: NewPause } | { kind: 'delete' } | { kind: 'keep' };
  execution: NewExecution;
  now: Date;
}

/**
 * Commits a run on an existing conversation in one statement (one round trip, one implicit
 * transaction): the conversation's new state and version, where it is still at the version the run
 * read; its pause saved or deleted; its execution record. The record's convid is taken from the fenced
 * update, so when the conversation moved on it is null, the record's not-null constraint fails, and the
 * whole statement keeps nothing: 'stale'. A record already there (the caller was told 503) fails it
 * whole too, with the primary key's unique violation, which the caller maps.
 */
export async function recordConversationRun(db: Db, run: ConversationRun): Promise<'committed' | 'stale'> {
  if (run.pause.kind === 'keep') return recordConversationRunKeepingPause(db, run);
  const fenced = db.with('conversation', (q) =>
    q
      .updateTable('conversations')
      .set((eb) => ({ ...conversationStateValues(run.state), last_used_at: run.now, version: eb('version', '+', 1) }))
      .where('id', '=', run.convid)
      .where('version', '=', run.version)
      .where(lockTimeoutCondition(lockTimeoutOf(db)))
      .returning('id'),
  );
  // The record's convid comes from the fenced update: null, and the statement fails whole, when it matched nothing.
  const pause = run.pause;
  const statement =
    pause.kind === 'save'
      ? fenced
          .with('pause', (q) => q.insertInto('paused_asks').values(pauseRow(pause.pause)).onConflict((oc) => oc.column('convid').doUpdateSet(pauseValues(pause.pause))).returning('convid'))
          .insertInto('executions')
          .values((eb) => ({ ...run.execution, convid: eb.selectFrom('conversation').select('id') }))
      : pause.kind === 'delete'
        ? fenced
            .with('pause', (q) => q.deleteFrom('paused_asks').where('convid', '=', run.convid).returning('convid'))
            .insertInto('executions')
            .values((eb) => ({ ...run.execution, convid: eb.selectFrom('conversation').select('id') }))
        : fenced.insertInto('executions').values((eb) => ({ ...run.execution, convid: eb.selectFrom('conversation').select('id') }));
  return executeFenced(statement, 'executions', 'convid');
}

/**
 * The SQL of a history with one entry appended, the oldest dropped at the limit, for the prepared
 * statements below: `history` the column, `limit` and `entry` (a jsonb value) their SQL. It appends as
 * conversationStateValues does (keep the two alike).
 */
function historyAppended(history: string, limit: string, entry: string): string {
  const added = `jsonb_build_array(${entry})`;
  return `case when jsonb_array_length(${history}) >= ${limit} then (${history} - 0) || ${added} else ${history} || ${added} end`;
}

/**
 * recordConversationRun for a run that leaves the pause as it is (most runs on a conversation), in a
 * prepared statement: the same fenced update, history append and record, parsed and planned once per
 * connection. Its parameters are the new variables, the history limit, the entry added, the time, the
 * conversation and the version read, the record's columns but its convid, which comes from the
 * update, then the lock timeout (withLockTimeout).
 */
const conversationRunStatement = (() => {
  const execution = placeholders(8, executionColumns.length - 1);
  const values = executionColumns.map((column) => (column === 'convid' ? '(select id from conversation)' : execution.shift()!));
  return {
    name: 'record-conversation-run',
    text:
      `with conversation as (update conversations set agent_vars = $1, conv_vars = $2, ` +
      `history = ${historyAppended('history', '$3', '$4::jsonb')}, ` +
      `last_used_at = $5, version = version + 1 where id = $6 and version = $7 and ${withLockTimeout(`$${7 + executionColumns.length}`)} returning id) ` +
      `insert into executions (${executionColumns.join(', ')}) values (${values.join(', ')})`,
  };
})();

async function recordConversationRunKeepingPause(db: Db, run: ConversationRun): Promise<'committed' | 'stale'> {
  const { agentVars, convVars, added } = run.state;
  const execution = executionValues(run.execution);
  const values = [
    JSON.stringify(agentVars),
    JSON.stringify(convVars),
    historyLimit,
    JSON.stringify(added),
    run.now,
    run.convid,
    run.version,
    ...executionColumns.filter((column) => column !== 'convid').map((column) => execution[column]),
    lockTimeoutOf(db),
  ];
  const { name, text } = conversationRunStatement;
  return executeFenced({ execute: () => executePrepared(db, name, text, values) }, 'executions', 'convid');
}

/**
 * Commits runs on different conversations in one statement (a group commit across conversations), each
 * as recordConversationRun would: each conversation's fenced update, each run's execution record
 * taking its convid from its own. All or nothing: one conversation moved on ('stale') or one record
 * already there fails the whole statement, and the caller writes the runs one by one to learn whose it
 * was. Only runs that leave the pause as it is, each on a conversation of its own.
 */
export async function recordRunsOnConversations(db: Db, runs: readonly ConversationRun[]): Promise<'committed' | 'stale'> {
  if (runs.some((run) => run.pause.kind !== 'keep') || new Set(runs.map((run) => run.convid)).size !== runs.length) {
    throw new Error('a group commit across conversations takes runs that keep their pause as it is, one per conversation');
  }
  const executions = runs.map((run) => executionValues(run.execution));
  const values = [
    runs.map((run) => run.convid),
    runs.map((run) => run.version),
    runs.map((run) => JSON.stringify(run.state.agentVars)),
    runs.map((run) => JSON.stringify(run.state.convVars)),
    runs.map((run) => JSON.stringify(run.state.added)),
    runs.map((run) => run.now),
    historyLimit,
    ...executionColumns.map((column) => executions.map((execution) => execution[column])),
    lockTimeoutOf(db),
  ];
  const { name, text } = runsOnConversationsStatement;
  return executeFenced({ execute: () => executePrepared(db, name, text, values) }, 'executions', 'convid');
}

/**
 * recordRunsOnConversations' statement, prepared once per connection whatever the group's size (each
 * column an array parameter, unnested into rows, as for first runs together). The conversations are
 * locked first, in id order, so two such statements sharing some conversations never wait on each
 * other crosswise; the update then finds its rows locked. Parameters: the conversations, the versions
 * read, the new variables, the history entries added, the times, the history limit, the records'
 * columns (the convid among them is the run's; the record takes the fenced update's, null when the
 * conversation moved on), then the lock timeout (withLockTimeout), set before the rows are locked.
 */
const runsOnConversationsStatement = (() => {
  const executionArrays = executionColumns.map((column, i) => `$${8 + i}::${executionTypes[column]}[]`);
  const recorded = executionColumns.map((column) => (column === 'convid' ? '(select k.id from conversation k where k.id = e.convid)' : `e.${column}`));
  const text =
    `with input as materialized (select * from unnest($1::uuid[], $2::int[], $3::jsonb[], $4::jsonb[], $5::jsonb[], $6::timestamptz[]) ` +
    `as r(id, version, agent_vars, conv_vars, added, last_used_at)), ` +
    `locked as materialized (select c.id from conversations c where c.id in (select id from input) ` +
    `and ${withLockTimeout(`$${8 + executionColumns.length}`)} order by c.id for update), ` +
    `conversation as (update conversations c set agent_vars = r.agent_vars, conv_vars = r.conv_vars, ` +
    `history = ${historyAppended('c.history', '$7', 'r.added')}, ` +
    `last_used_at = r.last_used_at, version = c.version + 1 ` +
    `from input r join locked l on l.id = r.id where c.id = r.id and c.version = r.version returning c.id) ` +
    `insert into executions (${executionColumns.join(', ')}) select ${recorded.join(', ')} ` +
    `from unnest(${executionArrays.join(', ')}) as e(${executionColumns.join(', ')})`;
  return { name: 'record-runs-on-conversations', text };
})();

const notNullViolation = '23502';

/** Runs a fenced commit: 'stale' when the column its fence fills (`table`.`column`) came out null. */
async function executeFenced(statement: { execute(): Promise<unknown> }, table: string, column: string): Promise<'committed' | 'stale'> {
  try {
    await statement.execute();
    return 'committed';
  } catch (err) {
    const failure = err as { code?: string; column?: string; table?: string };
    if (failure.code === notNullViolation && failure.table === table && failure.column === column) return 'stale';
    throw err;
  }
}

/**
 * Commits consecutive runs on one conversation in one statement (a group commit): the first read the
 * conversation at `runs[0].version` and each of the others started from the state the one before it
 * left. The conversation gets the last one's state, every run's history entry and its version raised by
 * the number of runs, where it is still at the first one's version; every run's execution record is
 * written with it. All or nothing, as recordConversationRun: 'stale' when the conversation moved on,
 * and a record already there fails the whole statement. Only runs that leave the pause as it is.
 */
export async function recordConsecutiveRuns(db: Db, runs: readonly ConversationRun[]): Promise<'committed' | 'stale'> {
  const [first] = runs;
  const last = runs[runs.length - 1];
  if (!first || !last || runs.some((run) => run.pause.kind !== 'keep' || run.convid !== first.convid)) throw new Error('a group commit takes runs on one conversation that keep its pause as it is');
  const statement = db
    .with('conversation', (q) =>
      q
        .updateTable('conversations')
        .set((eb) => ({ ...consecutiveStatesValues(runs.map((run) => run.state)), last_used_at: last.now, version: eb('version', '+', runs.length) }))
        .where('id', '=', first.convid)
        .where('version', '=', first.version)
        .where(lockTimeoutCondition(lockTimeoutOf(db)))
        .returning('id'),
    )
    .insertInto('executions')
    .values((eb) => runs.map((run) => ({ ...run.execution, convid: eb.selectFrom('conversation').select('id') })));
  return executeFenced(statement, 'executions', 'convid');
}
