import type { Answers, JsonObject } from '../../shared/api.js';
import type { RunJobData } from '../../shared/jobs.js';
import { readConversation, type ConversationRead } from '../../db/conversations.repository.js';
import { commitRun, recordAskedAgain, recordEnding } from '../../runs/commit.js';
import { mayRunOn } from '../../runs/conversation-rules.js';
import { agentNotFound, answersRefused, draftChanged, unknownConversation, type RunResult } from '../../runs/run-endings.js';
import { conversationAfterRun, type HeldConversation } from './held-conversation.js';
import { keptChanges } from './kept-changes.js';
import { responseOfRun, runAgent } from './run-agent.js';
import type { RunDeps, RunEventSink } from './run-deps.js';
import { freshStart, queryOf, resumeFrom } from './run-start.js';
import { confirmSession } from './session-watch.js';
import { validateAnswers } from './validate-answers.js';

/** How a call on a conversation ended, and the conversation it leaves to the next call in this worker (if it can). */
export interface ConversationRunEnd {
  result: RunResult;
  held?: HeldConversation;
}

/**
 * A call on an existing conversation, once it is its turn: reads the conversation, its pause and the
 * agent's latest version in one statement without a lock (or starts from `held`, the conversation as the
 * call before it in this worker left it, with the latest version read while it waited), runs the agent
 * with no connection held (resuming the pause with the call's answers, if paused), then commits fenced
 * by the version read (runs/commit.ts).
 */
export async function runOnConversation(
  deps: RunDeps,
  data: RunJobData,
  inputs: JsonObject,
  sink: RunEventSink,
  signal: AbortSignal,
  held?: HeldConversation & { latestVersion: number | undefined },
): Promise<ConversationRunEnd> {
  const startedAt = deps.clock.now();
  const read: ConversationRead | undefined = held
    ? { conversation: held.conversation, pause: undefined, latestVersion: held.latestVersion }
    : await readConversation(deps.db, data.convid, data.draft ? undefined : data.agentName);
  if (!read || !mayRunOn(read.conversation, read.pause, data, startedAt)) {
    return { result: await recordEnding(deps.db, data, { startedAt, agentVersion: undefined, response: unknownConversation(data) }) };
  }
  const { conversation, pause } = read;
  let answers: Answers | undefined;
  if (pause) {
    const check = validateAnswers(pause.ask, inputs);
    if (!check.ok) {
      // The pause is kept as it is: the caller is asked again, told which answers to fix.
      return { result: await recordAskedAgain(deps.db, data, { startedAt, agentVersion: pause.agent_version, response: answersRefused(data, pause.ask, check.fields) }) };
    }
    answers = check.answers;
  }
  const start = pause && answers ? await resumeFrom(deps, deps.db, pause, answers) : await freshStart(deps, deps.db, data, conversation, inputs, read.latestVersion);
  if (!start) return { result: agentNotFound(data) };
  if (start === 'draftChanged') return { result: await recordEnding(deps.db, data, { startedAt, agentVersion: undefined, response: draftChanged(data) }) };

  const ran = await runAgent(deps, data, start, sink, signal);
  const outcome = await confirmSession(deps, data.sessionId, ran.outcome);
  const changes = keptChanges(deps, data, conversation, start, outcome, startedAt);
  const ending = { startedAt, agentVersion: start.agent.version, response: responseOfRun(data, ran, outcome), query: queryOf(start) };
  const result = await commitRun(deps.db, data, conversation.version, changes, ending);
  return { result, held: result.kind === 'response' ? conversationAfterRun(conversation, pause !== undefined, changes, startedAt) : undefined };
}
