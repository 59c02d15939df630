import type { Context } from 'koa';
import { shardsOf } from '../../shared/shards.js';
import type { ExecutionResponse } from '../../shared/api.js';
import { runEventsKey } from '../../shared/channels.js';
import { AppError } from '../../shared/errors.js';
import type { LoggedEvent } from '../../shared/events.js';
import type { WebDeps } from '../deps.js';
import { countOpenStream } from '../ops/metrics.js';
import { recordUsageOf } from '../usage/call-usage.js';
import type { RunIdentity } from '../../db/executions.repository.js';
import type { UnqueuedFollow } from '../../runs/run-events.js';
import { launchLoggedRun, runWaitLimitMs, type ExecCall, type LaunchedRun } from './exec.service.js';
import { recoverLostAnswer, watchForLostAnswer } from './lost-runs.js';

const keepAliveMs = 15_000;

/** The run a stream relays. */
export interface StreamedRun {
  runId: string;
  convid: string;
  agentName: string;
  /** Set for a draft validation (so a run given up is recorded as one). */
  draft?: { id: string };
}

/**
 * A streamed execAgent: starts the run (or joins it, for a retry with the same Idempotency-Key) and
 * relays it. A retry that joins sends only the events after its `Last-Event-ID` (`afterId`), as
 * attach does: from the run's event log while it is kept, and the whole run rebuilt from its
 * execution record once the log is gone. An agent that is not published is answered 404
 * `agentNotFound` before anything is sent.
 */
export async function streamExecution(deps: WebDeps, ctx: Context, call: ExecCall, afterId = 0): Promise<void> {
  // Refused before the stream starts, as a non-streamed call is: a 200 and a start event would name a run that never runs.
  if (!call.draft) await deps.publishedAgents.requirePublished(call.body.agentName);
  // A new run is followed before its job is queued: its channel is subscribed while it is admitted, and
  // its event list is not read (nothing of it can have been published unheard).
  let followed: UnqueuedFollow | undefined;
  let run: LaunchedRun;
  try {
    run = await launchLoggedRun(deps, call, (runId) => (followed = deps.runEvents.followUnqueued(runId)).subscribed);
  } catch (err) {
    followed?.stop();
    throw err;
  }
  const resumeAfter = run.joined ? afterId : 0;
  const relayed: StreamedRun = { ...run, ...(run.identity.draft ? { draft: run.identity.draft } : {}) };
  if (run.storedResponse) {
    const logKept = resumeAfter > 0 && (await deps.redis.exists(runEventsKey(shardsOf(deps.config).prefixOf(run.runId), run.runId))) === 1;
    if (!logKept) return streamFinishedRun(ctx, run, run.storedResponse);
  }
  relayRun(deps, ctx, relayed, resumeAfter, run.finished, followed);
}

/**
 * Answers with the run's events as `text/event-stream` (DESIGN §4 Streaming): `start` (id 1), then the
 * worker's `part` and `delta` events as the agent makes them, then one `end` without `output`. Only
 * events numbered after `afterId` are sent (Last-Event-ID of a re-attach). A call refused once its
 * stream had started (its conversation stayed busy past CONV_WAIT_MS, a draft gone, the database
 * unavailable) ends with an `error` event carrying the error body instead.
 */
export function relayRun(deps: WebDeps, ctx: Context, run: StreamedRun, afterId: number, onEnd: () => void = () => undefined, followed?: UnqueuedFollow): void {
  const stream = openEventStream(ctx, run.runId);
  countOpenStream(deps.metrics.openStreams, ctx.res);
  if (afterId < 1) stream.send(1, 'start', { convid: run.convid, agentName: run.agentName, runId: run.runId });
  // A re-attach may have nothing to send for a while: its headers go out now.
  else ctx.res.flushHeaders();
  let finished = false;
  let lastId = afterId;
  // Set once the relay is attached: events heard before it (a run followed before it was queued) are
  // handed over within relayTo, and the end among them stops the relaying before these exist.
  let stopFollowing = () => undefined as void;
  let stopWatching = () => undefined as void;
  let deadline: NodeJS.Timeout | undefined;
  const stopRelaying = () => {
    finished = true;
    clearTimeout(deadline);
    stopFollowing();
    stopWatching();
    stream.close();
  };
  const relay = (event: LoggedEvent) => {
    if (finished) return;
    lastId = event.id;
    if (event.event === 'end') {
      // For the usage report, which records the call when its response finishes.
      recordUsageOf(ctx, { resultCode: event.data.resultCode });
      stream.send(event.id, 'end', withoutOutput(event.data));
    } else if (event.event === 'refused') stream.send(event.id, 'error', { error: { code: event.data.code, message: event.data.message } });
    else return stream.send(event.id, event.event, event.data);
    stopRelaying();
    onEnd();
  };
  const following = followed ? followed.relayTo(relay) : deps.runEvents.follow(run.runId, afterId, relay);
  if (finished) return following();
  stopFollowing = following;
  const identity: RunIdentity = { runId: run.runId, convid: run.convid, agentName: run.agentName, caller: ctx.state.principal, requestId: ctx.state.requestId, ...(run.draft ? { draft: run.draft } : {}) };
  // The end event can be lost (pub/sub is at most once, a Redis restart loses what was published): the execution record has it.
  const endWith = (response: ExecutionResponse) => relay({ runId: run.runId, id: lastId + 1, event: 'end', data: response });
  const failWith = (err: unknown) => {
    const error = err instanceof AppError ? err : new AppError('internal', 'An internal error occurred.');
    if (error.code === 'internal') deps.logger.error({ err, runId: run.runId }, 'streamed run not recovered');
    relay({ runId: run.runId, id: lastId + 1, event: 'refused', data: { code: error.code, message: error.message } });
  };
  stopWatching = watchForLostAnswer(deps, identity, { answer: endWith, fail: failWith });
  deadline = setTimeout(() => void recoverLostAnswer(deps, identity).then(endWith, failWith), runWaitLimitMs(deps));
  // A client that goes away stops the relaying, not the run: it can re-attach, or cancel.
  ctx.res.once('close', () => {
    if (!finished) stopRelaying();
  });
}

/**
 * A run that has already ended, as a stream rebuilt from its response: a retry that joined a finished
 * run, or a draft validation answered without a run.
 */
export function streamFinishedRun(ctx: Context, run: StreamedRun, response: ExecutionResponse): void {
  const stream = openEventStream(ctx, run.runId);
  stream.send(1, 'start', { convid: run.convid, agentName: run.agentName, runId: run.runId });
  let id = 1;
  for (const part of response.output ?? []) stream.send(++id, 'part', part);
  recordUsageOf(ctx, { resultCode: response.resultCode });
  stream.send(++id, 'end', withoutOutput(response));
  stream.close();
}

interface EventStream {
  send(id: number, event: string, data: unknown): void;
  close(): void;
}

function openEventStream(ctx: Context, runId: string): EventStream {
  ctx.set('Content-Type', 'text/event-stream');
  ctx.set('Cache-Control', 'no-cache, no-transform');
  ctx.set('X-Accel-Buffering', 'no');
  ctx.set('X-Run-Id', runId);
  ctx.status = 200;
  // Written to the response itself, not through a body stream Koa would pipe: a token is one write.
  ctx.respond = false;
  // The headers go out with the first event written (one write: the client wakes once for both).
  const res = ctx.res;
  const write = (text: string) => {
    if (!res.writableEnded && !res.destroyed) res.write(text);
  };
  // A comment line alone, with no blank line after it: a blank line would end an (empty) event, which
  // some clients hand to the application as a message with no data.
  const keepAlive = setInterval(() => write(': keep-alive\n'), keepAliveMs);
  return {
    send(id, event, data) {
      write(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    close() {
      clearInterval(keepAlive);
      if (!res.writableEnded) res.end();
    },
  };
}

function withoutOutput(response: ExecutionResponse): Omit<ExecutionResponse, 'output'> {
  const { output: _output, ...rest } = response;
  return rest;
}
