import { randomUUID } from 'node:crypto';
import { shardsOf } from '../../shared/shards.js';
import type { ExecutionResponse, JsonObject, Principal } from '../../shared/api.js';
import { AppError } from '../../shared/errors.js';
import type { RunEvent } from '../../shared/events.js';
import type { RunJobData } from '../../shared/jobs.js';
import { enqueueInSpan } from './enqueue-span.js';
import { queuePriority } from '../../runs/fair-priority.js';
import { findExecutionResponse, type RunIdentity } from '../../db/executions.repository.js';
import { enqueueTurn, enqueueTurnIfIdle, leaveTurn, turnLifetimeMs, type Turn } from '../../runs/turns.js';
import { cancelRuns } from './cancel.service.js';
import type { WebDeps } from '../deps.js';
import { isFindable, registerRun, unregisterRun, type ActiveRun } from './active-runs.js';
import type { ExecAgentBody } from './exec.schemas.js';
import { claimIdempotencyKey, findIdempotencyKey, releaseIdempotencyKey } from '../../db/idempotency-keys.repository.js';
import type { NewIdempotencyKey } from '../../db/schema.js';
import { differentRequestError, fingerprintRequest } from './idempotency.js';
import { recoverLostAnswer, watchForLostAnswer } from './lost-runs.js';
import { admitRun, admitShortRun, releaseRun } from './run-admission.js';

export interface ExecCall {
  caller: Principal;
  /** The session of a call made with a session cookie: the run ends `mustLogin` if it ends meanwhile. */
  sessionId?: string;
  body: ExecAgentBody;
  requestId: string;
  /** True when the caller sent the request id (X-Request-Id) rather than the server making one up. */
  requestIdGiven: boolean;
  idempotencyKey?: string;
  /** A draft validation: the caller's draft runs instead of the published agent, traced. */
  draft?: { id: string };
  /**
   * A background run (submit): its caller has the convid before the run ends, so a new conversation's
   * first run takes the conversation's turn too, and later calls on it wait for it.
   */
  background?: boolean;
  /** Given the RateLimit headers (DESIGN §16) once the call's run is admitted, for its answer to carry. */
  onAdmitted?: (headers: Record<string, string>) => void;
}

/** A call's run as the web process sees it. */
export interface LaunchedRun {
  runId: string;
  convid: string;
  agentName: string;
  /** True when an earlier call with the same Idempotency-Key started the run: this call only joins it. */
  joined: boolean;
  /** The run and its caller, as its execution record names them. */
  identity: RunIdentity;
  /** For a joined run that has ended: its stored response. */
  storedResponse?: ExecutionResponse;
  /** Forgets the run in the active-run registry once it ended (nothing to do for a joined run). */
  finished(): void;
}

/** How long a call waits for its run's end before asking the execution record (a worker that died is noticed after ~2 job locks). */
export function runWaitLimitMs(deps: WebDeps): number {
  const { config } = deps;
  return config.convWaitMs + config.maxAgentRuntimeMs + 2 * config.jobLockMs + 5_000;
}

/**
 * Runs an agent and resolves with its execution response (a non-streamed call): a short run on a new
 * conversation is answered by this process (WebDeps.inlineRuns), any other through the queue. Without
 * an Idempotency-Key a queued run answers on this process's inbox; with one, the run is logged so a
 * retry on any web process can join it.
 */
export async function executeAgent(deps: WebDeps, call: ExecCall): Promise<ExecutionResponse> {
  if (call.idempotencyKey) return executeKeyedCall(deps, call, call.idempotencyKey);
  const { convid, runId } = newRunIds(deps, call);
  const attempt = await tryShortRun(deps, call, runId);
  if ('response' in attempt) return attempt.response;
  // (Never withdrawn: nothing said it may not commit.)
  const priority = ('priority' in attempt ? attempt.priority : undefined) ?? (await admit(deps, call, runId));
  const answer = createAnswer();
  // Listening starts before the job exists: pub/sub keeps nothing for late subscribers.
  const stopListening = deps.runEvents.listen(runId, (event) => settle(event, answer));
  try {
    const run = await enqueueRun(deps, call, runId, priority, { kind: 'inbox', channel: deps.runEvents.inboxChannel }, convid);
    const stopWatching = watchForLostAnswer(deps, run.identity, answer);
    try {
      return await withDeadline(answer.promise, runWaitLimitMs(deps), () => recoverLostAnswer(deps, run.identity));
    } finally {
      stopWatching();
      run.finished();
    }
  } finally {
    stopListening();
  }
}

/**
 * The ids of a call's run: its conversation (a new one unless the call names one) and a new run id,
 * drawn to hash to that conversation's shard (shared/shards.ts) so the run is found there by its id alone.
 */
function newRunIds(deps: WebDeps, call: ExecCall): { convid: string; runId: string } {
  const convid = call.body.convid ?? randomUUID();
  return { convid, runId: shardsOf(deps.config).runIdFor(convid) };
}

/**
 * A call with an Idempotency-Key (DESIGN §4): the run takes the same path as any other call, a short
 * run answered here included, under the ids its key's record will name. A short run has no effect
 * outside its commit, so its key's record is written by that commit (no round trip of its own); when
 * another call with the key was recorded first, the run keeps nothing and the call joins that one. A
 * run going to the queue claims its key first, and a call that finds it claimed joins the run that holds it.
 */
async function executeKeyedCall(deps: WebDeps, call: ExecCall, key: string): Promise<ExecutionResponse> {
  const { convid, runId } = newRunIds(deps, call);
  const record = keyRecord(deps, call, key, { runId, convid });
  // A refusal keeps nothing, and no record of the key was written: a retry may run it.
  const attempt = await tryShortRun(deps, call, runId, { runId, convid }, record);
  if ('response' in attempt) return attempt.response;
  // To the queue, or withdrawn (the key was another call's): the key is claimed, or found held.
  const priority = 'priority' in attempt ? attempt.priority : undefined;
  const claimed = await claimKey(deps, call, key, record);
  if ('joined' in claimed) {
    if (priority !== undefined) releaseRun(deps, call.caller, runId);
    return awaitJoinedRun(deps, claimed.joined);
  }
  let run: LaunchedRun;
  try {
    run = await enqueueRun(deps, call, runId, priority ?? (await admit(deps, call, runId)), { kind: 'log' }, convid);
  } catch (err) {
    await releaseIdempotencyKey(deps.db, call.caller, key, runId).catch(() => undefined);
    throw err;
  }
  return awaitJoinedRun(deps, run);
}

async function awaitJoinedRun(deps: WebDeps, run: LaunchedRun): Promise<ExecutionResponse> {
  try {
    return run.storedResponse ?? (await awaitLoggedEnd(deps, run));
  } finally {
    run.finished();
  }
}

/**
 * A short run's outcome: its response; `withdrawn` when its Idempotency-Key was recorded by another
 * call first (nothing kept); or
 * the priority its run was admitted at for the queue (undefined: not admitted yet).
 */
type ShortRunAttempt = { response: ExecutionResponse } | { withdrawn: true } | { priority: number | undefined };

/**
 * Tries the call as a short run answered by this process (a new conversation's call, not a draft or a
 * background run), admitted as runAdmission.ts says. `ids`: the run's ids when they are already
 * promised (an Idempotency-Key's record); otherwise the inline run has ids of its own, and the place it
 * took is the call's whatever they are. `claim`: the key's record, written by the run's commit.
 */
async function tryShortRun(deps: WebDeps, call: ExecCall, runId: string, ids?: { runId: string; convid: string }, claim?: NewIdempotencyKey): Promise<ShortRunAttempt> {
  if (!mayRunInline(deps, call)) return { priority: undefined };
  // Admitted without Redis when nothing needs counting there (run-admission.ts admitShortRun).
  const priority = (await admitShortRun(deps, call.caller)) ? undefined : await admit(deps, call, runId);
  const data = runJobData(call, ids?.runId ?? randomUUID(), ids?.convid ?? randomUUID(), { kind: 'inbox', channel: deps.runEvents.inboxChannel }, { turn: null });
  let result: Awaited<ReturnType<typeof deps.inlineRuns.run>>;
  try {
    result = await deps.inlineRuns.run(data, call.body.inputs ?? {}, claim);
  } catch (err) {
    if (priority !== undefined) releaseRun(deps, call.caller, runId);
    throw err;
  }
  if (result === 'queue') return { priority };
  // Answered here (or withdrawn): its place is given back now.
  if (priority !== undefined) releaseRun(deps, call.caller, runId);
  if (result === 'withdrawn') return { withdrawn: true };
  if (result.kind === 'refused') throw new AppError(result.code, result.message);
  return { response: result.response };
}

function mayRunInline(deps: WebDeps, call: ExecCall): deps is WebDeps & { inlineRuns: NonNullable<WebDeps['inlineRuns']> } {
  return deps.inlineRuns !== undefined && !call.draft && !call.background && call.body.convid === undefined;
}

/** A call's answer, settled by the first of: the run's end event, a refusal, or the lost-answer watch. */
interface Answer {
  promise: Promise<ExecutionResponse>;
  answer(response: ExecutionResponse): void;
  fail(err: AppError): void;
}

function createAnswer(): Answer {
  let answer!: Answer['answer'];
  let fail!: Answer['fail'];
  const promise = new Promise<ExecutionResponse>((resolve, reject) => {
    answer = resolve;
    fail = reject;
  });
  // The answer can come before the call awaits it (a worker refuses the run while the web process is
  // still registering it): a rejection no one has awaited yet must not end the process.
  promise.catch(() => undefined);
  return { promise, answer, fail };
}

/**
 * Starts a logged run (streamed calls, submits, calls with an Idempotency-Key), or joins the one an
 * earlier call with the same key started. Throws before anything ran when the run cannot be queued.
 * `beforeQueued`: for a new run (a call without a key), called with its id as its admission begins;
 * the job is queued once what it returns has settled (a stream's follow subscribed meanwhile: exec.stream.ts).
 */
export async function launchLoggedRun(deps: WebDeps, call: ExecCall, beforeQueued?: (runId: string) => Promise<void>): Promise<LaunchedRun> {
  const key = call.idempotencyKey;
  const { convid, runId } = newRunIds(deps, call);
  if (!key) {
    const ready = beforeQueued?.(runId);
    const priority = await admit(deps, call, runId);
    await ready;
    return enqueueRun(deps, call, runId, priority, { kind: 'log' }, convid);
  }
  const claimed = await claimKey(deps, call, key, keyRecord(deps, call, key, { runId, convid }));
  if ('joined' in claimed) return claimed.joined;
  try {
    return await enqueueRun(deps, call, runId, await admit(deps, call, runId), { kind: 'log' }, convid);
  } catch (err) {
    await releaseIdempotencyKey(deps.db, call.caller, key, runId).catch(() => undefined);
    throw err;
  }
}

/** The record of the call's Idempotency-Key for a run of these ids. */
function keyRecord(deps: WebDeps, call: ExecCall, key: string, { runId, convid }: { runId: string; convid: string }): NewIdempotencyKey {
  const { stream: _stream, ...request } = call.body;
  return {
    principal_kind: call.caller.kind,
    principal_id: call.caller.id,
    key,
    run_id: runId,
    convid,
    agent_name: call.body.agentName,
    fingerprint: fingerprintRequest(deps.secrets.secretsKey, request),
    created_at: new Date(),
  };
}

/**
 * Claims the call's Idempotency-Key for `record`'s run (one going to the queue), or joins the run that
 * holds it: with its stored response when it has ended (a short run's record is written with its
 * response). A key used for a different request is refused.
 */
async function claimKey(deps: WebDeps, call: ExecCall, key: string, record: NewIdempotencyKey): Promise<{ claimed: true } | { joined: LaunchedRun }> {
  for (;;) {
    if (await claimIdempotencyKey(deps.db, { ...record, created_at: new Date() })) return { claimed: true };
    const earlier = await findIdempotencyKey(deps.db, call.caller, key, new Date());
    // Released (its run could not be queued) or expired since: claimed again.
    if (!earlier) continue;
    if (earlier.fingerprint !== record.fingerprint) throw differentRequestError();
    const identity: RunIdentity = { runId: earlier.run_id, convid: earlier.convid, agentName: earlier.agent_name, caller: call.caller, requestId: call.requestId };
    const storedResponse = await findExecutionResponse(deps.db, earlier.run_id);
    return { joined: { runId: earlier.run_id, convid: earlier.convid, agentName: earlier.agent_name, joined: true, identity, storedResponse, finished: () => undefined } };
  }
}

/**
 * Takes the run's place among its caller's runs (or throws 429 rateLimited) and hands the call its
 * RateLimit headers; answers the run's priority in the queue (fair share, runs/fair-priority.ts).
 */
async function admit(deps: WebDeps, call: ExecCall, runId: string): Promise<number> {
  const { headers, priority } = await admitRun(deps, call.caller, runId);
  call.onAdmitted?.(headers);
  return priority;
}

/** Queues the admitted run (its place is given back if it cannot be queued), after taking its place in the conversation's order and registering it for cancel/attach. */
async function enqueueRun(
  deps: WebDeps,
  call: ExecCall,
  runId: string,
  priority: number,
  events: RunJobData['events'],
  convid: string,
): Promise<LaunchedRun> {
  const { redis, config } = deps;
  const prefix = config.queuePrefix;
  const keepMs = turnLifetimeMs(config);
  const existing = call.body.convid !== undefined;
  const place = existing || call.background ? await takeTurn(deps, call, convid, runId, keepMs) : null;
  const turn = place?.member ?? null;
  // A call can be cancelled by what its caller knows while it runs: the ids it sent, and for a stream
  // (whose headers and start event come at once) the made-up request id and the new convid too.
  const logged = events.kind === 'log';
  const active: ActiveRun = {
    runId,
    convid,
    agentName: call.body.agentName,
    caller: call.caller,
    requestIds: [...(call.requestIdGiven || logged ? [call.requestId] : []), ...(call.idempotencyKey ? [call.idempotencyKey] : [])],
    byConversation: existing || logged,
    logged,
  };
  const findable = isFindable(active);
  const data = { ...runJobData(call, runId, convid, events, { turn, first: place?.first, sealedInputs: deps.box.seal(JSON.stringify(call.body.inputs ?? ({} as JsonObject))) }), priority };
  try {
    await Promise.all([
      findable && registerRun(redis, prefix, active, keepMs, config.streamReplaySeconds + Math.ceil(keepMs / 1000)),
      enqueueInSpan(data, () => deps.runQueues.of(convid).add('run', data, { jobId: runId, ...queuePriority(priority), removeOnComplete: true, removeOnFail: true })),
    ]);
  } catch (err) {
    if (turn) await leaveTurn(redis, shardsOf(config).prefixOf(convid), convid, turn).catch(() => undefined);
    if (findable) await unregisterRun(redis, prefix, active).catch(() => undefined);
    releaseRun(deps, call.caller, runId);
    throw err;
  }
  return {
    runId,
    convid,
    agentName: call.body.agentName,
    joined: false,
    identity: data,
    finished: () => void (findable && unregisterRun(redis, prefix, active).catch(() => undefined)),
  };
}

/**
 * The call's place in its conversation's order, as its `ifBusy` says (DESIGN §16): after the calls
 * queued or running (`enqueue`), only when there are none (`reject`: 409 conversationBusy, nothing
 * queued), or after stopping them (`interrupt`: they end `stopped` and keep nothing; this call is next).
 * The run's place among its caller's runs is given back when it takes none.
 */
async function takeTurn(deps: WebDeps, call: ExecCall, convid: string, runId: string, keepMs: number): Promise<Turn> {
  const { redis, config } = deps;
  const ifBusy = call.body.convid === undefined ? 'enqueue' : (call.body.ifBusy ?? 'enqueue');
  try {
    if (ifBusy === 'interrupt') await cancelRuns(deps, call.caller, { convid });
    if (ifBusy !== 'reject') return await enqueueTurn(redis, shardsOf(config).prefixOf(convid), convid, runId, keepMs);
    const turn = await enqueueTurnIfIdle(redis, shardsOf(config).prefixOf(convid), convid, runId, keepMs);
    if (!turn) throw new AppError('conversationBusy', 'The conversation has a run queued or running, and this call said ifBusy: reject; nothing was queued.');
    return turn;
  } catch (err) {
    releaseRun(deps, call.caller, runId);
    throw err;
  }
}

/** The run of a call as a job describes it; `sealedInputs` only for a job that is queued (an inline run has its inputs at hand). */
function runJobData(
  call: ExecCall,
  runId: string,
  convid: string,
  events: RunJobData['events'],
  { turn, first, sealedInputs = '' }: { turn: string | null; first?: boolean; sealedInputs?: string },
): RunJobData {
  return {
    runId,
    requestId: call.requestId,
    events,
    agentName: call.body.agentName,
    convid,
    newConversation: call.body.convid === undefined,
    turn,
    ...(first ? { turnFirst: true } : {}),
    caller: call.caller,
    ...(call.sessionId ? { sessionId: call.sessionId } : {}),
    ...(call.draft ? { draft: call.draft } : {}),
    sealedInputs,
    submittedAt: Date.now(),
    ...(call.background ? { background: true } : {}),
  };
}

/** Waits for a logged run's end (a non-streamed call with an Idempotency-Key, or its retry). */
function awaitLoggedEnd(deps: WebDeps, run: LaunchedRun): Promise<ExecutionResponse> {
  const answer = createAnswer();
  const stopFollowing = deps.runEvents.follow(run.runId, 0, (event) => settle(event, answer));
  const stopWatching = watchForLostAnswer(deps, run.identity, answer);
  return withDeadline(answer.promise, runWaitLimitMs(deps), () => recoverLostAnswer(deps, run.identity)).finally(() => {
    stopWatching();
    stopFollowing();
  });
}

function settle(event: RunEvent, answer: Answer): void {
  if (event.event === 'end') answer.answer(event.data);
  else if (event.event === 'refused') answer.fail(new AppError(event.data.code, event.data.message));
}

function withDeadline<T>(promise: Promise<T>, ms: number, onTimeout: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve, reject) => {
    timer = setTimeout(() => onTimeout().then(resolve, reject), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
