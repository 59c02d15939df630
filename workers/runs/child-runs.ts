import type { ExecutionResponse, JsonObject } from '../../shared/api.js';
import type { Config } from '../../shared/config.js';
import type { RunJobData } from '../../shared/jobs.js';
import type { Logger } from '../../shared/logger.js';
import type { SecretBox } from '../../shared/secret-box.js';
import { shardsOf } from '../../shared/shards.js';
import type { Db } from '../../db/database.js';
import { findExecutionResponse } from '../../db/executions.repository.js';
import type { CallerLimitsCache } from '../../runs/caller-limits-cache.js';
import { activeTraceparent } from '../../runs/child-span.js';
import { fairPriority, queuePriority } from '../../runs/fair-priority.js';
import type { RedisClient } from '../../runs/redis-connection.js';
import type { RunQueues } from '../../runs/run-queues.js';
import { releaseRunSlot, slotLeftoverAfterMs, takeRunSlot, type SlotAnswer } from '../../runs/run-slots.js';
import type { CallerLimits } from '../../runs/caller-limits.js';
import { needsCounting, type InFlightView } from '../../runs/in-flight-view.js';
import type { RunEnding } from '../../runs/run-endings.js';
import { stopRun } from '../../runs/stop-run.js';
import { forgetRunChildren, noteRunChild, stopRunChildren } from '../../runs/run-children.js';
import { enqueueTurn, leaveTurn, turnLifetimeMs, type Turn } from '../../runs/turns.js';
import type { CallRefusal, CallResult, ChildCall } from '../sandbox/sandbox.types.js';
import type { AgentCodeCache } from './agent-code-cache.js';
import type { ChildEnd, ChildEnds } from './child-ends.js';

/**
 * The child runs of sys.call (DESIGN §19), for every run of one worker. A child is a run like any
 * other: its caller's (the parent's), counted against that caller's limits and queued at its fair
 * priority (§16), in a conversation of its own unless the parent named one, with an execution record.
 * Its id is fixed before it starts (workers/runs/agent-calls.ts), and starting it is idempotent on
 * that id: a child whose job is there is joined, one with a record has ended and its record answers,
 * and only a child with neither is queued, with its id as its job id. A parent tried again, or resumed
 * before its child's end was recorded, so waits for the same child instead of starting another.
 */
export interface ChildRuns {
  /**
   * Starts (or joins) `child` of the run `parent`, and resolves with how it ended; see AgentCalls.run.
   * `waits` is called when the parent is to wait for a child queued or running elsewhere (it lends its place then).
   */
  run(parent: RunJobData, child: ChildCall, signal: AbortSignal, waits?: () => void): Promise<CallResult>;
  /** A run waiting on its children lends its place in the worker to them until the function returned is called (ChildRunsDeps.lendPlace). */
  lendPlace(): () => void;
  /** The run `parentRunId` ended in this worker, its children stopped there or ended: their note is dropped (runs/run-children.ts). */
  parentEnded(parentRunId: string): Promise<void>;
  /** The run `parentRunId` ended without its worker (that worker died): its children still queued or running are stopped. */
  stopChildrenOf(parentRunId: string): Promise<void>;
}

export interface ChildRunsDeps {
  config: Config;
  db: Db;
  box: SecretBox;
  logger: Logger;
  /** The connection for the turn, the place in flight and the cancel (not a blocking one). */
  redis: RedisClient;
  runQueues: RunQueues;
  agents: AgentCodeCache;
  callerLimits: CallerLimitsCache;
  /** Each caller's runs in flight as last heard: a short child run here needs no place taken while they leave room. */
  inFlight: InFlightView;
  ends: ChildEnds;
  /** Counts a waiting parent out of the runs the worker holds (workers/fetch-window.ts FetchWindow.lend). */
  lendPlace?: () => () => void;
  /**
   * Runs a child as a short run in this worker (short-run.ts), when the worker has room: 'queue' when
   * it did not, or the child was not short (nothing of it kept or sent); 'withdrawn' when `mayCommit`
   * said no. Absent: every child is queued.
   */
  runHere?: (data: RunJobData, inputs: JsonObject, mayCommit: PromiseLike<boolean> | undefined) => Promise<RunEnding | 'queue' | 'withdrawn'>;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function createChildRuns(deps: ChildRunsDeps): ChildRuns {
  const shards = shardsOf(deps.config);
  // The runs of this worker whose queued children are noted in Redis (runs/run-children.ts).
  const noted = new Set<string>();
  const note = (parent: RunJobData, childRunId: string) => {
    noted.add(parent.runId);
    return noteRunChild(deps.redis, shards, parent.runId, childRunId, slotLeftoverAfterMs(deps.config));
  };
  return {
    async run(parent, child, signal, waits) {
      // The end is listened for before the job exists: pub/sub keeps nothing for late subscribers.
      const waiting = deps.ends.await(child.runId);
      try {
        const started = await startChild(deps, parent, child, note).catch((err: unknown) => {
          deps.logger.warn({ err: String(err), runId: child.runId }, 'child run not started');
          return refusal('unavailable', 'The child run could not be started; try again.', null);
        });
        if (started === 'queued') waiting.publishesHere();
        else if (started !== 'joined') return started;
        waits?.();
        return resultOfEnd(child, await untilEndOrAbort(deps, child, waiting.ended, signal));
      } finally {
        waiting.stop();
      }
    },
    lendPlace: () => deps.lendPlace?.() ?? (() => undefined),
    async parentEnded(parentRunId) {
      if (!noted.delete(parentRunId)) return;
      await forgetRunChildren(deps.redis, shards, parentRunId).catch((err: unknown) => deps.logger.warn({ err: String(err), runId: parentRunId }, 'children note not dropped; it lapses'));
    },
    async stopChildrenOf(parentRunId) {
      noted.delete(parentRunId);
      const stopped = await stopRunChildren(deps, shards, parentRunId);
      if (stopped > 0) deps.logger.info({ runId: parentRunId, stopped }, 'children of a run whose worker died stopped');
    },
  };
}

/** The child's end, or (the parent ended meanwhile) a `stopped` answer no one reads, the child stopped unless the parent only paused. */
function untilEndOrAbort(deps: ChildRunsDeps, child: ChildCall, ended: Promise<ChildEnd>, signal: AbortSignal): Promise<ChildEnd> {
  return new Promise<ChildEnd>((resolve) => {
    const onAbort = () => {
      if (signal.reason !== 'detach') {
        stopRun(deps, child.runId).catch((err: unknown) => deps.logger.warn({ err: String(err), runId: child.runId }, 'child run not stopped'));
      }
      resolve({ kind: 'response', response: { resultCode: 'stopped', convid: child.convid, agentName: child.agentName, output: [] } });
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    void ended.then((end) => {
      signal.removeEventListener('abort', onAbort);
      resolve(end);
    });
  });
}

/**
 * 'queued' once this worker queued the child, 'joined' when it was queued before (maybe by another
 * worker); how it ended when it has, or was refused before any run. Throws when Redis or PostgreSQL failed it.
 */
async function startChild(deps: ChildRunsDeps, parent: RunJobData, child: ChildCall, note: (parent: RunJobData, childRunId: string) => Promise<void>): Promise<'queued' | 'joined' | CallResult> {
  const { config, db } = deps;
  if (!child.newConversation && !uuidPattern.test(child.convid)) return refusal('unknownConversation', 'The conversation is unknown, expired, or paused by another agent.', null);
  // Its turn would come after the parent's, which waits for it: refused rather than left to time out.
  if (child.convid === parent.convid) return refusal('conversationBusy', 'An agent cannot call an agent in the conversation it runs in: the call would wait for the run that made it.', null);
  const queue = deps.runQueues.of(child.runId);
  const caller = parent.caller;
  // Read at once: whether it started before (unless it cannot have), whether its agent exists (known
  // when this worker read a version of it: agents are never deleted), its caller's limits.
  const [before, exists, limits] = await Promise.all([
    child.live ? undefined : startedBefore(deps, child.runId),
    deps.agents.lastRead(child.agentName) !== undefined || deps.agents.latestVersion(db, child.agentName).then((version) => version !== undefined),
    deps.callerLimits.get(caller),
  ]);
  // A child joined is noted as this parent's too: a parent resumed on another worker may die there.
  if (before === 'joined') await note(parent, child.runId);
  if (before) return before;
  if (!exists) return refusal('agentNotFound', `No agent is named ${child.agentName}.`, null);
  const takeSlot = () => {
    const taking = takeRunSlot(deps.redis, shardsOf(config), caller, child.runId, limits, slotLeftoverAfterMs(config));
    void taking.then((slot) => deps.inFlight.heard(caller, slot.inFlight), () => undefined);
    return taking;
  };
  // A new conversation's child (as a fresh call makes it: no earlier try can have started it) is tried
  // here first. Its place is taken meanwhile, unless nothing needs counting (as the web process admits
  // its short runs, server/exec/run-admission.ts): no per-minute limit, and the caller's runs in flight
  // as last heard leave room. Nothing of it goes out before its commit, which waits for the place (a
  // refused one keeps nothing).
  const tryHere = child.newConversation && child.live && deps.runHere !== undefined;
  const counted = tryHere && needsCounting(limits, deps.inFlight.recent(caller)) ? takeSlot() : undefined;
  const here = tryHere ? await runChildHere(deps, parent, child, counted) : 'queue';
  if (here !== 'queue') return here;
  const slot = await (counted ?? takeSlot());
  if (!slot.admitted) return rateLimited(limits, slot.refusedBy);
  const priority = fairPriority(slot.inFlight, limits.weight);
  let turn: Turn | undefined;
  try {
    if (!child.newConversation) turn = await enqueueTurn(deps.redis, shardsOf(config).prefixOf(child.convid), child.convid, child.runId, turnLifetimeMs(config));
    const data = childJobData(deps, parent, child, { priority, turn });
    // Noted first (or together): a parent whose worker dies once its child is queued has it stopped.
    await Promise.all([note(parent, child.runId), queue.add('run', data, { jobId: child.runId, ...queuePriority(priority), removeOnComplete: true, removeOnFail: true })]);
    return 'queued';
  } catch (err) {
    if (turn) await leaveTurn(deps.redis, shardsOf(config).prefixOf(child.convid), child.convid, turn.member).catch(() => undefined);
    await releaseRunSlot(deps.redis, shardsOf(config), caller, child.runId).catch(() => undefined);
    throw err;
  }
}

/**
 * The child run here (ChildRunsDeps.runHere), its place being taken (`taking`) or needing none: how
 * it ended, or 'queue' (its place, if taken, kept for the queued run).
 */
async function runChildHere(deps: ChildRunsDeps, parent: RunJobData, child: ChildCall, taking: Promise<SlotAnswer> | undefined): Promise<CallResult | 'queue'> {
  const data = childJobData(deps, parent, child, { priority: 1, turn: undefined }, '');
  const admitted = taking?.then((slot) => slot.admitted);
  // Awaited only if the run reaches its commit; a failed take is answered below.
  admitted?.catch(() => undefined);
  let ran: Awaited<ReturnType<NonNullable<ChildRunsDeps['runHere']>>>;
  try {
    ran = await deps.runHere!(data, child.inputs, admitted);
  } catch (err) {
    if (taking && (await taking.catch(() => undefined))?.admitted) await releaseRunSlot(deps.redis, shardsOf(deps.config), parent.caller, child.runId).catch(() => undefined);
    throw err;
  }
  if (ran === 'queue') return 'queue';
  const slot = taking && (await taking);
  if (slot && !slot.admitted) return rateLimited(await deps.callerLimits.get(parent.caller), slot.refusedBy);
  if (ran === 'withdrawn') throw new Error('a child run admitted was withdrawn');
  if (!slot) return endOfChildHere(child, ran);
  // Its place is given back as a worker gives back a run's: before its end is told.
  releaseRunSlot(deps.redis, shardsOf(deps.config), parent.caller, child.runId).catch((err: unknown) => deps.logger.warn({ err: String(err), runId: child.runId }, 'run place not given back; it lapses'));
  return endOfChildHere(child, ran);
}

function endOfChildHere(child: ChildCall, ran: RunEnding): CallResult {
  return ran.kind === 'response' ? resultOf(child.runId, ran.response) : refusal(refusalCode(ran.code), ran.message, child.convid);
}

function rateLimited(limits: CallerLimits, refusedBy: 'runsPerMinute' | 'runsInFlight'): CallResult {
  return refusal('rateLimited', refusedBy === 'runsInFlight' ? `Your account has ${limits.runsInFlight} runs queued or running, its limit.` : `Your account has started ${limits.runsPerMinute} runs this minute, its limit.`, null);
}

/**
 * 'joined' when the child's job is there, its result when it has ended, undefined when it never
 * ran. The job first, then the record: a child's record is written before its job goes, so a child
 * that has neither never ran.
 */
async function startedBefore(deps: ChildRunsDeps, runId: string): Promise<'joined' | CallResult | undefined> {
  if (await deps.runQueues.of(runId).getJob(runId)) return 'joined';
  const recorded = await findExecutionResponse(deps.db, runId);
  return recorded && resultOf(runId, recorded);
}

/** The child's job; `sealedInputs` given for a child run here, which has its inputs at hand. */
function childJobData(deps: ChildRunsDeps, parent: RunJobData, child: ChildCall, { priority, turn }: { priority: number; turn: Turn | undefined }, sealedInputs?: string): RunJobData {
  return {
    runId: child.runId,
    requestId: parent.requestId,
    events: { kind: 'inbox', channel: deps.ends.inboxChannel },
    agentName: child.agentName,
    convid: child.convid,
    newConversation: child.newConversation,
    turn: turn?.member ?? null,
    ...(turn?.first ? { turnFirst: true } : {}),
    caller: parent.caller,
    ...(parent.sessionId ? { sessionId: parent.sessionId } : {}),
    sealedInputs: sealedInputs ?? deps.box.seal(JSON.stringify(child.inputs)),
    submittedAt: Date.now(),
    priority,
    traceparent: activeTraceparent(),
    parent: { runId: parent.runId, depth: (parent.parent?.depth ?? 0) + 1 },
  };
}

function resultOfEnd(child: ChildCall, end: ChildEnd): CallResult {
  if (end.kind === 'response') return resultOf(child.runId, end.response);
  return refusal(refusalCode(end.code), end.message, child.convid);
}

/** The child's execution response as sys.call answers it. */
function resultOf(runId: string, response: ExecutionResponse): CallResult {
  return {
    resultCode: response.resultCode,
    convid: response.convid,
    runId,
    output: response.output ?? [],
    ...(response.askInput ? { askInput: response.askInput } : {}),
    ...(response.error ? { error: response.error } : {}),
  };
}

function refusal(resultCode: CallResult['resultCode'], message: string, convid: string | null): CallResult {
  return { resultCode, convid, runId: null, output: [], error: { message } };
}

/** A worker's refusal of a child (runs/run-endings.ts) as a CallRefusal. */
function refusalCode(code: string): CallRefusal {
  if (code === 'agentNotFound' || code === 'conversationBusy' || code === 'rateLimited') return code;
  return 'unavailable';
}
