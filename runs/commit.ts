import type { ExecutionResponse } from '../shared/api.js';
import type { RunJobData } from '../shared/jobs.js';
import { lockTimeoutOf, type Db } from '../db/database.js';
import type { NewExecution, NewIdempotencyKey } from '../db/schema.js';
import { touchConversation, type ConversationState } from '../db/conversations.repository.js';
import { insertExecution } from '../db/executions.repository.js';
import type { ConversationRun } from '../db/run-commit.repository.js';
import type { ConversationRunWriter } from './conversation-run-writer.js';
import type { FirstRunWriter } from './first-run-writer.js';
import type { NewPause } from '../db/paused-asks.repository.js';
import { conversationChanged, versionMoved, type RunAgain, type RunEnding } from './run-endings.js';
import { activeTraceId, inChildSpan } from './child-span.js';
import type { TimelineEntry } from '../shared/run-timeline.js';

/**
 * The commit of a run (DESIGN §11): what the run changed and its execution record, in one statement
 * at its end (one round trip), fenced by the conversation's version as the run read it. A stale writer (a
 * run whose conversation moved on) keeps nothing and its caller gets 409; a run whose caller was told
 * 503 (its execution record is there already) keeps nothing either.
 */

/** What a run leaves in its conversation: only `success` and `ask` leave anything. */
export interface RunChanges {
  state: ConversationState;
  pause: { kind: 'save'; pause: NewPause } | { kind: 'delete' } | { kind: 'keep' };
}

/** A call's execution record, as the commit writes it: when it started, the version that ran, its response, its query. */
export interface RunRecord {
  startedAt: Date;
  /** The agent version (a draft's revision) that ran; undefined when none did. */
  agentVersion: number | undefined;
  response: ExecutionResponse;
  /** inputs.query of a new prompt (kept as the turn's query); null or undefined otherwise. */
  query?: string | null;
  /** What the run fetched, asked and logged (the console's Run page). */
  timeline?: readonly TimelineEntry[];
}

/**
 * Commits a run on an existing conversation read at `version`: its changes (if any) and its execution
 * record together (written with the other runs' ending in the same turn, `runs`), or nothing when the
 * conversation is no longer at that version (409).
 */
export async function commitRun(db: Db, runs: ConversationRunWriter, data: RunJobData, version: number, changes: RunChanges | undefined, record: RunRecord): Promise<RunEnding> {
  if (!changes) return inChildSpan('commit', () => recordEnding(db, data, record));
  const committed = await inChildSpan('commit', () => runs.write(conversationRun(data, version, changes, record)).catch((err: unknown) => {
    if (isExecutionAlreadyRecorded(err)) throw new AbandonedRunError(data.runId);
    throw err;
  }));
  return committed === 'stale' ? conversationChanged() : { kind: 'response', response: record.response };
}

/** A kept run on an existing conversation read at `version`, as the commit writes it. */
export function conversationRun(data: RunJobData, version: number, changes: RunChanges, record: RunRecord): ConversationRun {
  return { convid: data.convid, version, state: changes.state, pause: changes.pause, execution: executionRow(data, record), now: record.startedAt };
}

/**
 * Commits a new conversation's first run: the conversation (empty when the run kept nothing), its pause
 * and its record, in one statement (shared with the first runs ending at the same time). With `fence`
 * (the version a run started on without reading it), RunAgain `versionMoved` when the agent has a newer
 * one: nothing is kept, and the call runs again on the latest.
 */
export async function commitFirstRun(
  firstRuns: FirstRunWriter,
  data: RunJobData,
  changes: RunChanges | undefined,
  record: RunRecord,
  fence?: { agentName: string; version: number },
  claim?: NewIdempotencyKey,
): Promise<RunEnding | RunAgain> {
  const conversation = { id: data.convid, ownerKind: data.caller.kind, ownerId: data.caller.id, plan: data.caller.plan, now: record.startedAt };
  const pause = changes?.pause.kind === 'save' ? changes.pause.pause : undefined;
  const row = { conversation, state: changes?.state, pause, execution: executionRow(data, record), fence, ...(claim ? { claim } : {}) };
  const written = await inChildSpan('commit', () => firstRuns.write(row)).catch((err: unknown) => {
    // One statement: the execution record already there (the caller was answered 503) fails it whole.
    if (isExecutionAlreadyRecorded(err)) throw new AbandonedRunError(data.runId);
    // So does the record of its Idempotency-Key, written by another call with the key first.
    if (isUniqueViolationOf(err, 'idempotency_keys_pkey')) throw new IdempotencyKeyTakenError();
    throw err;
  });
  return written === 'stale' ? versionMoved() : { kind: 'response', response: record.response };
}

/** Records a call asked again (its answers refused): the conversation counts as used, its pause is kept. */
export async function recordAskedAgain(db: Db, data: RunJobData, record: RunRecord): Promise<RunEnding> {
  return db.transaction().execute(async (trx) => {
    await touchConversation(trx, data.convid, record.startedAt, lockTimeoutOf(db));
    return recordEnding(trx, data, record);
  });
}

/**
 * Writes the execution record (in the run's transaction, when it has one). A record there already
 * means a web process gave up on the run and told its caller so: the transaction must keep nothing.
 */
export async function recordEnding(trx: Db, data: RunJobData, record: RunRecord): Promise<RunEnding> {
  if (!(await insertExecution(trx, executionRow(data, record)))) throw new AbandonedRunError(data.runId);
  return { kind: 'response', response: record.response };
}

/** The run's caller was answered without it (503) before it could commit; nothing of it is kept. */
export class AbandonedRunError extends Error {
  override name = 'AbandonedRunError';
  constructor(runId: string) {
    super(`run ${runId} was given up by its caller before it ended; nothing of it is kept`);
  }
}

/**
 * A short run's Idempotency-Key was recorded by another call with the key (a retry's run that lost the
 * race, or one whose first call went to the queue): nothing of this run is kept, and its call joins that one.
 */
export class IdempotencyKeyTakenError extends Error {
  override name = 'IdempotencyKeyTakenError';
  constructor() {
    super('another call with this Idempotency-Key was recorded first; nothing of this run is kept');
  }
}

const uniqueViolation = '23505';

function isUniqueViolationOf(err: unknown, constraint: string): boolean {
  const failure = err as { code?: string; constraint?: string };
  return failure.code === uniqueViolation && failure.constraint === constraint;
}

function isExecutionAlreadyRecorded(err: unknown): boolean {
  return isUniqueViolationOf(err, 'executions_pkey');
}

function executionRow(data: RunJobData, record: RunRecord): NewExecution {
  const { startedAt, response } = record;
  const finishedAt = new Date();
  return {
    id: data.runId,
    convid: data.convid,
    agent_name: data.agentName,
    agent_version: record.agentVersion ?? null,
    draft_id: data.draft?.id ?? null,
    principal_kind: data.caller.kind,
    principal_id: data.caller.id,
    request_id: data.requestId,
    result_code: response.resultCode,
    error_message: response.error?.message ?? null,
    // A draft's trace is left out: it can be large, and only the live answer needs it.
    response: JSON.stringify({ ...response, trace: undefined }),
    query: record.query ?? null,
    submitted_at: data.submittedAt === undefined ? null : new Date(data.submittedAt),
    background: data.background === true,
    started_at: startedAt,
    finished_at: finishedAt,
    duration_ms: Math.max(0, finishedAt.getTime() - startedAt.getTime()),
    timeline: record.timeline?.length ? JSON.stringify(record.timeline) : null,
    // Made within the run's trace (runs/ code runs in the worker's run span): the console links to it.
    trace_id: activeTraceId(),
    parent_run_id: data.parent?.runId ?? null,
  };
}
