import { randomInt } from 'node:crypto';
import type { Answers, JsonObject } from '../../shared/api.js';
import type { RunJobData } from '../../shared/jobs.js';
import type { Db } from '../../db/database.js';
import type { Conversation, PausedAsk, PauseState } from '../../db/schema.js';
import type { JournalEntry } from '../sandbox/sandbox.types.js';
import type { AgentCode } from './agent-code-cache.js';
import { findDraftCode } from './draft-runs.js';
import type { RunDeps } from './run-deps.js';
import { openJournal } from './sealed-journal.js';

/** Everything a run starts from: the code, the state it sees, and the calls to replay. */
export interface RunStart {
  agent: AgentCode;
  state: PauseState;
  journal: JournalEntry[];
  resuming: boolean;
}

/** The query a run was called with, as its turn keeps it: a new prompt's inputs.query; null for answers. */
export function queryOf(start: RunStart): string | null {
  return !start.resuming && typeof start.state.inputs.query === 'string' ? start.state.inputs.query : null;
}

/**
 * A new prompt: the latest published version (or the draft), the conversation's variables and history
 * as they are (none for a new conversation), a fresh random seed. Undefined when there is no such agent.
 * `latestVersion`, when the caller read it already (with the conversation), spares reading it again.
 */
export async function freshStart(
  deps: RunDeps,
  db: Db,
  data: RunJobData,
  conversation: Conversation | undefined,
  inputs: JsonObject,
  latestVersion?: number,
): Promise<RunStart | undefined> {
  const agent = data.draft
    ? await findDraftCode(db, data.draft.id)
    : latestVersion !== undefined
      ? await deps.agents.version(db, data.agentName, latestVersion)
      : await deps.agents.latest(db, data.agentName);
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
 * pause resumes only with the revision that made it ('draftChanged' otherwise).
 */
export async function resumeFrom(deps: RunDeps, db: Db, pause: PausedAsk, answers: Answers): Promise<RunStart | 'draftChanged' | undefined> {
  const agent = pause.draft_id ? await findDraftCode(db, pause.draft_id) : await deps.agents.version(db, pause.agent_name, pause.agent_version);
  if (!agent) return undefined;
  if (pause.draft_id && agent.version !== pause.agent_version) return 'draftChanged';
  const journal = openJournal(deps.box, pause.journal);
  const last = journal[journal.length - 1];
  if (last?.op === 'ask') journal[journal.length - 1] = { ...last, answers };
  return { agent, state: pause.start_state, journal, resuming: true };
}
