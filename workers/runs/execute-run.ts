import type { JsonObject } from '../../shared/api.js';
import type { RunJobData } from '../../shared/jobs.js';
import { recordEnding } from '../../runs/commit.js';
import { conversationBusy, isRunAgain, stoppedWaiting, type RunAgain, type RunEnding } from '../../runs/run-endings.js';
import { turnArrivedAt, turnLifetimeMs } from '../../runs/turns.js';
import { stopped } from '../sandbox/sandbox-endings.js';
import { runOnConversation, type AfterRun } from './conversation-run.js';
import { runFirst } from './first-run.js';
import type { HeldConversation } from './held-conversation.js';
import type { RunDeps, RunEventSink } from './run-deps.js';

/**
 * Runs one call of an agent (DESIGN §11). A call on an existing conversation first waits for its turn
 * (calls run in arrival order, at most CONV_WAIT_MS after arriving). It reads the conversation, runs
 * the agent with no database connection checked out, then commits what it changed together with its
 * execution record in one short transaction, only where the conversation is still at the version it
 * read: otherwise nothing of it is kept. A call that ends hands the conversation it committed to the
 * next call when that one waits in this worker (workers/runs/held-conversation.ts): the calls queued on
 * a busy conversation run back to back without reading it again.
 */
export async function executeRun(deps: RunDeps, data: RunJobData, inputs: JsonObject, sink: RunEventSink, signal: AbortSignal): Promise<RunEnding> {
  const turn = data.turn;
  if (data.newConversation) {
    // A background run's first call holds the new conversation's turn (it is first in line): the calls
    // its caller queued behind it wait for its end.
    try {
      return await runFirst(deps, data, inputs, sink, signal);
    } finally {
      if (turn) await deps.turns.release(data.convid, turn);
    }
  }
  if (!turn) return ended(await runOnConversation(deps, data, inputs, sink, signal));
  // A conversation with calls queued on it: who is next is asked while this call runs, so the
  // conversation can be handed to it as soon as this call has run, while its commit goes out (or at its
  // release). A call that found the conversation idle asks only if, by then, a call waits here.
  const successor = data.turnFirst ? undefined : deps.turns.successor(data.convid, turn);
  successor?.catch(() => undefined);
  for (let first = data.turnFirst === true; ; first = false) {
    const ending = await takeTurn(deps, data, inputs, sink, signal, { turn, first, successor });
    // It started from a state the call before it did not keep: nothing of it went out; its turn again.
    if (!isRunAgain(ending)) return ending;
  }
}

/** One wait for a conversation's turn and the run that follows; RunAgain as runOnConversation, the turn then kept. */
async function takeTurn(
  deps: RunDeps,
  data: RunJobData,
  inputs: JsonObject,
  sink: RunEventSink,
  signal: AbortSignal,
  { turn, first, successor }: { turn: string; first: boolean; successor: Promise<string | undefined> | undefined },
): Promise<RunEnding | RunAgain> {
  let after: AfterRun | RunAgain | undefined;
  let handedOver: Promise<boolean> | undefined;
  let startedFrom: Promise<boolean> | undefined;
  try {
    // A call that must wait reads the agent's latest version meanwhile: if the call before it hands the
    // conversation over, that is all it has left to read.
    let latestVersion: Promise<number | undefined> | undefined;
    const waited = await deps.turns.wait(data.convid, turn, {
      deadline: turnArrivedAt(turn) + deps.config.convWaitMs,
      signal,
      staleMs: turnLifetimeMs(deps.config),
      first,
      onQueued: () => {
        if (data.draft) return;
        latestVersion = deps.agents.latestVersion(deps.db, data.agentName);
        latestVersion.catch(() => undefined);
      },
    });
    if (waited.kind === 'busy') return conversationBusy();
    if (waited.kind === 'stopped') {
      return await recordEnding(deps.db, data, { startedAt: deps.clock.now(), agentVersion: undefined, response: stoppedWaiting(data, stopped(signal)) });
    }
    // Handed over while the call before still commits: nothing of this call ends before that commit has.
    startedFrom = waited.held?.committed;
    const from = { onRan: (next: HeldConversation) => void (handedOver = deps.turns.handOver(data.convid, turn, next, successor)) };
    if (waited.held && latestVersion) {
      after = await runOnConversation(deps, data, inputs, sink, signal, { ...from, held: { ...waited.held, latestVersion: await latestVersion } });
    } else {
      // Read from PostgreSQL, which must hold what the call before committed first.
      await startedFrom;
      after = await runOnConversation(deps, data, inputs, sink, signal, from);
    }
    return isRunAgain(after) ? after : after.ending;
  } finally {
    await startedFrom;
    if (!after || !isRunAgain(after)) {
      if (await handedOver) await deps.turns.leave(data.convid, turn);
      else await deps.turns.release(data.convid, turn, after?.held, successor);
    }
  }
}

function ended(after: AfterRun | RunAgain): RunEnding {
  if (isRunAgain(after)) throw new Error('a run that read its conversation started from a state that was not kept');
  return after.ending;
}
