import type { Answers, JsonObject } from '../../shared/api.js';
import type { RunJobData } from '../../shared/jobs.js';
import type { ConversationRead } from '../../db/conversations.repository.js';
import { recordAskedAgain, recordEnding } from '../../runs/commit.js';
import { mayRunOn } from '../../runs/conversation-rules.js';
import { agentNotFound, answersRefused, baseNotKept, draftChanged, isRunAgain, unknownConversation, type RunAgain, type RunEnding } from '../../runs/run-endings.js';
import { conversationAfterRun, type HeldConversation } from './held-conversation.js';
import { leftByRun } from './kept-changes.js';
import { runAgent, type AgentRun } from './run-agent.js';
import type { RunDeps, RunEventSink } from './run-deps.js';
import { freshStart, resumeFrom } from './run-start.js';
import { speculate } from './speculation.js';
import { validateAnswers } from './validate-answers.js';

/** How a call on a conversation ended, and the conversation it leaves to the next call in this worker (if it can). */
export interface AfterRun {
  ending: RunEnding;
  held?: HeldConversation;
}

/** Where a call on a conversation starts from, and whom it tells when it has run. */
export interface ConversationRunFrom {
  /**
   * The conversation as the call before it in this worker left it, with the agent's latest version read
   * while it waited: no read. With `committed`, that call still commits: this one runs as a speculation.
   */
  held?: HeldConversation & { latestVersion: number | undefined };
  /**
   * Called when the run is over and its commit goes out, with the conversation as the commit leaves it
   * (`committed` settles with the commit): the next call can start from it at once. Not called when the
   * conversation is left paused.
   */
  onRan?: (next: HeldConversation) => void;
}

/**
 * A call on an existing conversation, once it is its turn: reads the conversation, its pause and the
 * agent's latest version in one statement without a lock, shared with the runs starting in the same
 * turn (runs/conversation-reader.ts), or starts from `from.held`; runs the agent
 * with no connection held (resuming the pause with the call's answers, if paused), then commits fenced
 * by the version read (runs/commit.ts), behind the commits of the calls before it in this worker
 * (runs/conversation-commits.ts). A call started from a state still being committed is a speculation
 * (speculation.ts): it reaches nothing outside the sandbox until that state is kept; when it is not,
 * the call is to run again (RunAgain `baseNotKept`): nothing of it went out or was kept, and it waits
 * for its turn again.
 */
export async function runOnConversation(
  deps: RunDeps,
  data: RunJobData,
  inputs: JsonObject,
  sink: RunEventSink,
  signal: AbortSignal,
  from: ConversationRunFrom = {},
): Promise<AfterRun | RunAgain> {
  const { held, onRan } = from;
  const startedAt = deps.clock.now();
  const read: ConversationRead | undefined = held
    ? { conversation: held.conversation, pause: undefined, latestVersion: held.latestVersion }
    : await deps.conversations.read({ id: data.convid, latestOf: data.draft ? undefined : data.agentName });
  if (!read || !mayRunOn(read.conversation, read.pause, data, startedAt)) {
    if (held?.committed && !(await held.committed)) return baseNotKept();
    return { ending: await recordEnding(deps.db, data, { startedAt, agentVersion: undefined, response: unknownConversation(data) }) };
  }
  const { conversation, pause } = read;
  let answers: Answers | undefined;
  if (pause) {
    const check = validateAnswers(pause.ask, inputs);
    if (!check.ok) {
      // The pause is kept as it is: the caller is asked again, told which answers to fix.
      return { ending: await recordAskedAgain(deps.db, data, { startedAt, agentVersion: pause.agent_version, response: answersRefused(data, pause.ask, check.fields) }) };
    }
    answers = check.answers;
  }
  const start = pause && answers ? await resumeFrom(deps, deps.db, pause, answers) : await freshStart(deps, deps.db, data, conversation, inputs, read.latestVersion);
  if (!start) return { ending: agentNotFound(data) };
  if (start === 'draftChanged') return { ending: await recordEnding(deps.db, data, { startedAt, agentVersion: undefined, response: draftChanged(data) }) };

  const behind = held?.committed && speculate(sink, signal, held.committed);
  let ran: AgentRun;
  try {
    ran = behind ? await runAgent(deps, data, start, behind.sink, behind.signal, { hold: behind.hold }) : await runAgent(deps, data, start, sink, signal);
  } finally {
    if (behind) behind.end();
  }
  const { changes, record } = await leftByRun(deps, data, conversation, start, ran, startedAt);
  const committing = deps.commits.commit({ data, version: conversation.version, changes, record, base: held?.committed });
  const next = conversationAfterRun(conversation, pause !== undefined, changes, startedAt);
  // The next call starts from what this one leaves, as it is being committed. A run that kept nothing
  // leaves the state it started from, kept whatever becomes of its record.
  if (next && onRan) onRan({ ...next, committed: committing.then((ending) => !isRunAgain(ending) && (!changes || ending.kind === 'response'), () => !changes) });
  const ending = await committing;
  if (isRunAgain(ending)) return ending;
  return { ending, held: ending.kind === 'response' ? next : undefined };
}
