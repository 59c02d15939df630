import type { JsonObject } from '../../shared/api.js';
import type { RunJobData } from '../../shared/jobs.js';
import { recordEnding } from '../../runs/commit.js';
import { conversationBusy, stoppedWaiting, type RunResult } from '../../runs/run-endings.js';
import { turnArrivedAt, turnLifetimeMs } from '../../runs/turns.js';
import { stopOf } from '../sandbox/run-stop.js';
import { runOnConversation, type ConversationRunEnd } from './conversation-run.js';
import { runFirst } from './first-run.js';
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
export async function executeRun(deps: RunDeps, data: RunJobData, inputs: JsonObject, sink: RunEventSink, signal: AbortSignal): Promise<RunResult> {
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
  if (!turn) return (await runOnConversation(deps, data, inputs, sink, signal)).result;
  let end: ConversationRunEnd | undefined;
  let successor: Promise<string | undefined> | undefined;
  try {
    // A call that must wait reads the agent's latest version meanwhile: if the call before it hands the
    // conversation over, that is all it has left to read.
    let latestVersion: Promise<number | undefined> | undefined;
    const waited = await deps.turns.wait(data.convid, turn, {
      deadline: turnArrivedAt(turn) + deps.config.convWaitMs,
      signal,
      staleMs: turnLifetimeMs(deps.config),
      first: data.turnFirst,
      onQueued: () => {
        if (data.draft) return;
        latestVersion = deps.agents.latestVersion(deps.db, data.agentName);
        latestVersion.catch(() => undefined);
      },
    });
    if (waited.kind === 'busy') return conversationBusy();
    if (waited.kind === 'stopped') {
      return await recordEnding(deps.db, data, { startedAt: deps.clock.now(), agentVersion: undefined, response: stoppedWaiting(data, stopOf(signal)) });
    }
    // A conversation with calls queued on it: who is next is asked while this call runs, so its release
    // hands over without a round trip first. (A call that found the conversation idle does not ask.)
    if (!data.turnFirst) {
      successor = deps.turns.successor(data.convid, turn);
      successor.catch(() => undefined);
    }
    const held = waited.held && latestVersion ? { ...waited.held, latestVersion: await latestVersion } : undefined;
    end = await runOnConversation(deps, data, inputs, sink, signal, held);
    return end.result;
  } finally {
    await deps.turns.release(data.convid, turn, end?.held, successor);
  }
}
