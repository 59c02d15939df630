import type { RunJobData } from '../../shared/jobs.js';
import type { ConversationState } from '../../db/conversations.repository.js';
import type { NewPause } from '../../db/paused-asks.repository.js';
import type { Conversation } from '../../db/schema.js';
import type { RunChanges, RunRecord } from '../../runs/commit.js';
import { appendHistory } from '../../runs/conversation-rules.js';
import type { SandboxEnding } from '../sandbox/sandbox-endings.js';
import { responseOfRun, type AgentRun } from './run-agent.js';
import type { RunDeps } from './run-deps.js';
import { queryOf, type RunStart } from './run-start.js';
import { sealJournal } from './sealed-journal.js';
import { confirmSession } from './session-watch.js';

/**
 * What a run that was over leaves for its commit: the changes it keeps in its conversation
 * (keptChanges; `conversation` undefined for a new one) and its execution record, once a cookie session's call
 * has checked that its session still lives (a run of an ended session keeps nothing).
 */
export async function leftByRun(
  deps: RunDeps,
  data: RunJobData,
  conversation: Conversation | undefined,
  start: RunStart,
  ran: AgentRun,
  startedAt: Date,
): Promise<{ changes: RunChanges | undefined; record: RunRecord }> {
  const ending = await confirmSession(deps, data.sessionId, ran.ending);
  const changes = keptChanges(deps, data, conversation, start, ending, startedAt);
  return { changes, record: { startedAt, agentVersion: start.agent.version, response: responseOfRun(data, ran, ending), query: queryOf(start), timeline: ran.timeline.entries } };
}

/**
 * What a run leaves in its conversation. Success and ask keep what the run changed: the variables, a
 * history entry, and the pause (saved on ask, removed when a resumed run succeeds). Any other ending
 * keeps nothing (undefined).
 */
export function keptChanges(
  deps: Pick<RunDeps, 'box'>,
  data: RunJobData,
  conversation: Conversation | undefined,
  start: RunStart,
  ending: SandboxEnding,
  now: Date,
): RunChanges | undefined {
  if (ending.resultCode !== 'success' && ending.resultCode !== 'ask') return undefined;
  const query = queryOf(start);
  const state: ConversationState = {
    agentVars: { ...conversation?.agent_vars, [data.agentName]: ending.vars },
    convVars: ending.conv,
    ...appendHistory(conversation?.history ?? [], { agentName: data.agentName, query, resultCode: ending.resultCode, at: now }),
  };
  if (ending.resultCode === 'success') return { state, pause: start.resuming ? { kind: 'delete' } : { kind: 'keep' } };
  const pause: NewPause = {
    convid: data.convid,
    agentName: data.agentName,
    agentVersion: start.agent.version,
    ...(data.draft ? { draftId: data.draft.id } : {}),
    ask: ending.askInput,
    journal: sealJournal(deps.box, ending.journal),
    startState: start.state,
    now,
  };
  return { state, pause: { kind: 'save', pause } };
}
