import type { AskInput } from '../shared/api.js';
import type { Db } from './database.js';
import type { PausedAsk, PauseState } from './schema.js';

export interface NewPause {
  convid: string;
  agentName: string;
  agentVersion: number;
  ask: AskInput;
  journal: unknown[];
  startState: PauseState;
  now: Date;
}

export async function findPause(trx: Db, convid: string): Promise<PausedAsk | undefined> {
  return trx.selectFrom('paused_asks').selectAll().where('convid', '=', convid).executeTakeFirst();
}

/** Records the conversation's pause, replacing an earlier one (an agent that asks twice in a row). */
export async function savePause(trx: Db, pause: NewPause): Promise<void> {
  const values = {
    agent_name: pause.agentName,
    agent_version: pause.agentVersion,
    ask: JSON.stringify(pause.ask),
    journal: JSON.stringify(pause.journal),
    start_state: JSON.stringify(pause.startState),
  };
  await trx
    .insertInto('paused_asks')
    .values({ convid: pause.convid, created_at: pause.now, ...values })
    .onConflict((oc) => oc.column('convid').doUpdateSet(values))
    .execute();
}

export async function deletePause(trx: Db, convid: string): Promise<void> {
  await trx.deleteFrom('paused_asks').where('convid', '=', convid).execute();
}
