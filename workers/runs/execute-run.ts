import { randomInt } from 'node:crypto';
import type { Answers, ExecutionResponse, JsonObject, OutputPart, ResultCode } from '../../shared/api.js';
import type { Config } from '../../shared/config.js';
import type { Clock } from '../../shared/clock.js';
import type { ErrorCode } from '../../shared/errors.js';
import type { RunJobData } from '../../shared/jobs.js';
import type { SecretBox } from '../../shared/secret-box.js';
import type { TraceEvent } from '../../shared/trace.js';
import { turnArrivedAt, turnLifetimeMs, type ConversationTurns } from '../../shared/conversation-turns.js';
import type { Db } from '../../db/database.js';
import type { Conversation, NewExecution, PausedAsk, PauseState } from '../../db/schema.js';
import { commitConversationState, readConversation, touchConversation, type ConversationState } from '../../db/conversations.repository.js';
import { deletePause, savePause, type NewPause } from '../../db/paused-asks.repository.js';
import { recordFirstRun } from '../../db/first-run.repository.js';
import { insertExecution } from '../../db/executions.repository.js';
import type { ContextPool } from '../sandbox/context-pool.js';
import { runSandbox } from '../sandbox/run-sandbox.js';
import type { JournalEntry, SandboxError, SandboxOutcome } from '../sandbox/sandbox.types.js';
import type { AgentCode, AgentCodeCache } from './agent-code-cache.js';
import { draftRunResponse, findDraftCode } from './draft-runs.js';
import { responseForJob } from '../../shared/draft-validation.js';
import { appendHistory, isExpired, isOwnedBy } from './conversation-rules.js';
import { openJournal, sealJournal } from './sealed-journal.js';
import { createSourceMapper, mapErrorToSource, type SourceMapper } from './source-position.js';
import { createTraceRecorder, passwordAnswers, type TraceRecorder } from './trace-recorder.js';
import { validateAnswers } from './validate-answers.js';
import { sessionEnded, stopOf } from '../sandbox/run-stop.js';
import { sessionIsLive } from './session-watch.js';

export interface RunDeps {
  config: Config;
  db: Db;
  box: SecretBox;
  clock: Clock;
  agents: AgentCodeCache;
  turns: ConversationTurns;
  isolates: ContextPool;
}

/** Where the parts of a logged run (streamed, or joinable) go as they are made. */
export interface RunEventSink {
  part(part: OutputPart): void;
  delta(text: string): void;
  trace(event: TraceEvent): void;
}

export type RunResult =
  | { kind: 'response'; response: ExecutionResponse }
  | { kind: 'refused'; code: ErrorCode; message: string };

/** Everything a run starts from: the code, the state it sees, and the calls to replay. */
interface RunStart {
  agent: AgentCode;
  state: PauseState;
  journal: JournalEntry[];
  resuming: boolean;
}

/**
 * Runs one call of an agent (DESIGN §11). A call on an existing conversation first waits for its turn
 * (calls run in arrival order, at most CONV_WAIT_MS after arriving). It reads the conversation, runs
 * the agent with no database connection checked out, then commits what it changed together with its
 * execution record in one short transaction, only where the conversation is still at the version it
 * read: otherwise nothing of it is kept.
 */
export async function executeRun(
  deps: RunDeps,
  data: RunJobData,
  inputs: JsonObject,
  sink: RunEventSink,
  signal: AbortSignal,
): Promise<RunResult> {
  if (data.newConversation) return runFirst(deps, data, inputs, sink, signal);
  const turn = data.turn;
  if (!turn) return runOnConversation(deps, data, inputs, sink, signal);
  try {
    const waited = await deps.turns.wait(data.convid, turn, {
      deadline: turnArrivedAt(turn) + deps.config.convWaitMs,
      signal,
      staleMs: turnLifetimeMs(deps.config),
    });
    if (waited === 'busy') return conversationBusy();
    if (waited === 'stopped') {
      const stop = stopOf(signal);
      const response = respond(data, stop.resultCode, [], stop.error);
      return record(deps.db, data, deps.clock.now(), undefined, response);
    }
    return await runOnConversation(deps, data, inputs, sink, signal);
  } finally {
    await deps.turns.release(data.convid, turn);
  }
}

function conversationBusy(): RunResult {
  return { kind: 'refused', code: 'conversationBusy', message: 'The conversation is busy with other calls; try again.' };
}

/** The conversation moved on while the run ran (a stale writer): the caller is told, nothing is kept. */
function conversationChanged(): RunResult {
  return {
    kind: 'refused',
    code: 'conversationBusy',
    message: 'The conversation changed while this call ran (another call was committed first); nothing of this call was kept. Try again.',
  };
}

/** A new conversation's first run: nothing to lock, and one statement records everything it leaves. */
async function runFirst(deps: RunDeps, data: RunJobData, inputs: JsonObject, sink: RunEventSink, signal: AbortSignal): Promise<RunResult> {
  const startedAt = deps.clock.now();
  const start = await freshStart(deps, deps.db, data, undefined, inputs);
  if (!start) return agentNotFound(data);
  const ran = await runAgent(deps, data, start, sink, signal);
  const outcome = await confirmSession(deps, deps.db, data, ran.outcome);
  const kept = keptChanges(deps, data, undefined, start, outcome, startedAt);
  const response = responseOf(data, start, outcome, ran);
  const conversation = { id: data.convid, ownerKind: data.caller.kind, ownerId: data.caller.id, plan: data.caller.plan, now: startedAt };
  const pause = kept?.pause.kind === 'save' ? kept.pause.pause : undefined;
  try {
    await recordFirstRun(deps.db, { conversation, state: kept?.state, pause, execution: executionRow(data, startedAt, start.agent.version, response) });
  } catch (err) {
    // One statement: the execution record already there (the caller was answered 503) fails it whole.
    const failure = err as { code?: string; constraint?: string };
    if (failure.code === uniqueViolation && failure.constraint === 'executions_pkey') throw new AbandonedRunError(data.runId);
    throw err;
  }
  return { kind: 'response', response };
}

/** A call on an existing conversation: read, run with no connection held, commit fenced by the version read. */
async function runOnConversation(
  deps: RunDeps,
  data: RunJobData,
  inputs: JsonObject,
  sink: RunEventSink,
  signal: AbortSignal,
): Promise<RunResult> {
  const startedAt = deps.clock.now();
  const read = await readConversation(deps.db, data.convid);
  const conversation = read?.conversation;
  if (!conversation || !isOwnedBy(conversation, data.caller) || isExpired(conversation, startedAt)) {
    return record(deps.db, data, startedAt, undefined, unknownConversation(data));
  }
  const pause = read.pause;
  if (pause && !pausedBySameAgent(pause, data)) return record(deps.db, data, startedAt, undefined, unknownConversation(data));

  let answers: Answers | undefined;
  if (pause) {
    const check = validateAnswers(pause.ask, inputs);
    if (!check.ok) {
      // The pause is kept as it is: the caller is asked again, told which answers to fix.
      const response = respond(data, 'ask', [], { message: 'Some answers are missing or not valid.', fields: check.fields });
      return deps.db.transaction().execute(async (trx) => {
        await touchConversation(trx, data.convid, startedAt);
        return record(trx, data, startedAt, pause.agent_version, { ...response, askInput: pause.ask });
      });
    }
    answers = check.answers;
  }
  const start = pause && answers ? await resumeFrom(deps, deps.db, pause, answers) : await freshStart(deps, deps.db, data, conversation, inputs);
  if (!start) return agentNotFound(data);
  if (start === 'draftChanged') return record(deps.db, data, startedAt, undefined, draftChanged(data));

  const ran = await runAgent(deps, data, start, sink, signal);
  const outcome = await confirmSession(deps, deps.db, data, ran.outcome);
  const kept = keptChanges(deps, data, conversation, start, outcome, startedAt);
  const response = responseOf(data, start, outcome, ran);
  if (!kept) return record(deps.db, data, startedAt, start.agent.version, response);
  return deps.db
    .transaction()
    .execute(async (trx) => {
      if (!(await commitConversationState(trx, data.convid, conversation.version, kept.state, startedAt))) throw new StaleRunError();
      if (kept.pause.kind === 'save') await savePause(trx, kept.pause.pause);
      else if (kept.pause.kind === 'delete') await deletePause(trx, data.convid);
      return record(trx, data, startedAt, start.agent.version, response);
    })
    .catch((err: unknown) => {
      if (err instanceof StaleRunError) return conversationChanged();
      throw err;
    });
}

/** The conversation is no longer at the version the run read; thrown to roll the commit back. */
class StaleRunError extends Error {
  override name = 'StaleRunError';
}

/**
 * A run made with a session keeps its changes only if the session still lives as they are committed:
 * the watch may not have seen it end yet (it checks every second).
 */
async function confirmSession(deps: RunDeps, db: Db, data: RunJobData, outcome: SandboxOutcome): Promise<SandboxOutcome> {
  if (!data.sessionId || (outcome.resultCode !== 'success' && outcome.resultCode !== 'ask')) return outcome;
  if (await sessionIsLive({ config: deps.config, db, clock: deps.clock }, data.sessionId)) return outcome;
  return { ...sessionEnded, output: outcome.output };
}

function agentNotFound(data: RunJobData): RunResult {
  if (data.draft) return { kind: 'refused', code: 'draftNotFound', message: 'The draft is gone or no longer compiles; save it again.' };
  return { kind: 'refused', code: 'agentNotFound', message: `No agent is named ${data.agentName}.` };
}

/** A paused conversation resumes only with the agent that paused: the same name, and the same draft or none. */
function pausedBySameAgent(pause: PausedAsk, data: RunJobData): boolean {
  return pause.agent_name === data.agentName && (pause.draft_id ?? undefined) === data.draft?.id;
}

/** How a run went: its outcome, where its positions are in the source, and for a draft what it traced. */
interface Ran {
  outcome: SandboxOutcome;
  toSource: SourceMapper;
  trace?: TraceRecorder;
}

function responseOf(data: RunJobData, start: RunStart, outcome: SandboxOutcome, ran: Ran): ExecutionResponse {
  const error = 'error' in outcome ? outcome.error : undefined;
  const response = plainResponse(data, outcome.resultCode, outcome.output, error && publicError(mapErrorToSource(error, ran.toSource)));
  if (outcome.resultCode === 'ask') response.askInput = outcome.askInput;
  if (!data.draft) return response;
  return draftRunResponse(data, response, { error, toSource: ran.toSource, trace: ran.trace?.events ?? [] });
}

async function runAgent(deps: RunDeps, data: RunJobData, start: RunStart, sink: RunEventSink, signal: AbortSignal): Promise<Ran> {
  const toSource = createSourceMapper(start.agent.sourceMap);
  // A streamed validation sends each trace event as it happens; a non-streamed one answers with them all.
  const trace = data.draft
    ? createTraceRecorder({ toSource, secrets: passwordAnswers(start.journal), emit: data.events.kind === 'log' ? sink.trace : undefined })
    : undefined;
  const outcome = await runSandbox({
    code: start.agent.code,
    agentName: data.agentName,
    convid: data.convid,
    inputs: start.state.inputs,
    caller: { kind: data.caller.kind, id: data.caller.id, role: data.caller.role },
    history: start.state.history,
    vars: start.state.vars,
    conv: start.state.conv,
    randomSeed: start.state.randomSeed,
    journal: start.journal,
    memoryMb: deps.config.agentMemoryMb,
    maxRuntimeMs: deps.config.maxAgentRuntimeMs,
    fresh: data.draft !== undefined,
    signal,
    httpAllow: deps.config.agentHttpAllow,
    onPart: data.events.kind === 'log' ? sink.part : undefined,
    onDelta: data.events.kind === 'log' ? sink.delta : undefined,
    onTrace: trace?.onTrace,
  }, deps.isolates);
  return { outcome, toSource, trace };
}

async function freshStart(
  deps: RunDeps,
  trx: Db,
  data: RunJobData,
  conversation: Conversation | undefined,
  inputs: JsonObject,
): Promise<RunStart | undefined> {
  const agent = data.draft ? await findDraftCode(trx, data.draft.id) : await deps.agents.latest(trx, data.agentName);
  if (!agent) return undefined;
  const state: PauseState = {
    inputs,
    vars: conversation?.agent_vars[data.agentName] ?? {},
    conv: conversation?.conv_vars ?? {},
    history: conversation?.history ?? [],
    randomSeed: randomInt(2 ** 31),
  };
  return { agent, state, journal: [], resuming: false };
}

/**
 * The paused run starts again from its recorded state; the ask it paused on gets the answers. A draft's
 * pause resumes only with the revision that made it.
 */
async function resumeFrom(deps: RunDeps, trx: Db, pause: PausedAsk, answers: Answers): Promise<RunStart | 'draftChanged' | undefined> {
  const agent = pause.draft_id ? await findDraftCode(trx, pause.draft_id) : await deps.agents.version(trx, pause.agent_name, pause.agent_version);
  if (!agent) return undefined;
  if (pause.draft_id && agent.version !== pause.agent_version) return 'draftChanged';
  const journal = openJournal(deps.box, pause.journal);
  const last = journal[journal.length - 1];
  if (last?.op === 'ask') journal[journal.length - 1] = { ...last, answers };
  return { agent, state: pause.start_state, journal, resuming: true };
}

/** What a run leaves in its conversation. */
interface KeptChanges {
  state: ConversationState;
  pause: { kind: 'save'; pause: NewPause } | { kind: 'delete' } | { kind: 'keep' };
}

/**
 * Success and ask keep what the run changed: the variables, a history entry, and the pause (saved
 * on ask, removed when a resumed run succeeds). Any other ending keeps nothing (undefined).
 */
function keptChanges(
  deps: RunDeps,
  data: RunJobData,
  conversation: Conversation | undefined,
  start: RunStart,
  outcome: SandboxOutcome,
  now: Date,
): KeptChanges | undefined {
  if (outcome.resultCode !== 'success' && outcome.resultCode !== 'ask') return undefined;
  const query = !start.resuming && typeof start.state.inputs.query === 'string' ? start.state.inputs.query : null;
  const state: ConversationState = {
    agentVars: { ...conversation?.agent_vars, [data.agentName]: outcome.vars },
    convVars: outcome.conv,
    history: appendHistory(conversation?.history ?? [], { agentName: data.agentName, query, resultCode: outcome.resultCode, at: now }),
  };
  if (outcome.resultCode === 'success') return { state, pause: start.resuming ? { kind: 'delete' } : { kind: 'keep' } };
  const pause: NewPause = {
    convid: data.convid,
    agentName: data.agentName,
    agentVersion: start.agent.version,
    ...(data.draft ? { draftId: data.draft.id } : {}),
    ask: outcome.askInput,
    journal: sealJournal(deps.box, outcome.journal),
    startState: start.state,
    now,
  };
  return { state, pause: { kind: 'save', pause } };
}

/** The error as a response carries it: no stack (a draft validation shows it as runtimeError). */
function publicError({ stack: _stack, ...error }: SandboxError): ExecutionResponse['error'] {
  return error;
}

/** A response made without a run of the agent (or before it): a draft validation's gets the validation fields too. */
function respond(data: RunJobData, resultCode: ResultCode, output: OutputPart[], error?: ExecutionResponse['error']): ExecutionResponse {
  const response = plainResponse(data, resultCode, output, error);
  return responseForJob(data, response);
}

function plainResponse(data: RunJobData, resultCode: ResultCode, output: OutputPart[], error?: ExecutionResponse['error']): ExecutionResponse {
  const response: ExecutionResponse = { resultCode, convid: data.convid, agentName: data.agentName, output };
  if (error) response.error = error;
  return response;
}

function unknownConversation(data: RunJobData): ExecutionResponse {
  return respond(data, 'unknownConversation', [], { message: 'The conversation is unknown, expired, or paused by another agent.' });
}

function draftChanged(data: RunJobData): ExecutionResponse {
  return respond(data, 'unknownConversation', [], { message: 'The draft was saved again after this conversation paused; start a new validation.' });
}

/**
 * Writes the execution record (in the run's transaction, when it has one). A record there already
 * means a web process gave up on the run and told its caller so: the transaction must keep nothing.
 */
async function record(trx: Db, data: RunJobData, startedAt: Date, version: number | undefined, response: ExecutionResponse): Promise<RunResult> {
  if (!(await insertExecution(trx, executionRow(data, startedAt, version, response)))) throw new AbandonedRunError(data.runId);
  return { kind: 'response', response };
}

/** The run's caller was answered without it (503) before it could commit; nothing of it is kept. */
export class AbandonedRunError extends Error {
  override name = 'AbandonedRunError';
  constructor(runId: string) {
    super(`run ${runId} was given up by its caller before it ended; nothing of it is kept`);
  }
}

const uniqueViolation = '23505';

function executionRow(data: RunJobData, startedAt: Date, version: number | undefined, response: ExecutionResponse): NewExecution {
  const finishedAt = new Date();
  return {
    id: data.runId,
    convid: data.convid,
    agent_name: data.agentName,
    agent_version: version ?? null,
    draft_id: data.draft?.id ?? null,
    principal_kind: data.caller.kind,
    principal_id: data.caller.id,
    request_id: data.requestId,
    result_code: response.resultCode,
    error_message: response.error?.message ?? null,
    // A draft's trace is left out: it can be large, and only the live answer needs it.
    response: JSON.stringify({ ...response, trace: undefined }),
    started_at: startedAt,
    finished_at: finishedAt,
    duration_ms: Math.max(0, finishedAt.getTime() - startedAt.getTime()),
  };
}
