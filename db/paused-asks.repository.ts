import type { AskInput } from '../shared/api.js';
import type { Db } from './database.js';
import type { PausedAsk, PauseState } from './schema.js';

export interface NewPause {
  convid: string;
  agentName: string;
  /** The published version that paused, or the draft's revision. */
  agentVersion: number;
  /** The draft whose run paused (undefined for a published agent). */
  draftId?: string;
  ask: AskInput;
  journal: unknown[];
  startState: PauseState;
  now: Date;
}

/** The row of a new pause. */
export function pauseRow(pause: NewPause) {
  return { convid: pause.convid, created_at: pause.now, ...pauseValues(pause) };
}

export function pauseValues(pause: NewPause) {
  return {
    agent_name: pause.agentName,
    agent_version: pause.agentVersion,
    draft_id: pause.draftId ?? null,
    ask: JSON.stringify(pause.ask),
    journal: JSON.stringify(pause.journal),
    start_state: JSON.stringify(pause.startState),
  };
}

export async function findPause(db: Db, convid: string): Promise<PausedAsk | undefined> {
  return db.selectFrom('paused_asks').selectAll().where('convid', '=', convid).executeTakeFirst();
}
