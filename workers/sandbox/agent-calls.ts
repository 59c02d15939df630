import type { JsonObject } from '../../shared/api.js';
import { AgentFault, AgentTypeError } from './error-codes.js';
import { chargeJournal, recordEntry, takeReplayed, type EntryOf } from './journal.js';
import type { CallResult } from './sandbox.types.js';
import type { Session } from './session.js';

/**
 * sys.call (DESIGN §19): runs another agent as a child run and answers how it ended. Journaled like
 * the other waits: the child's ids are fixed and recorded before it starts, so a replay gets the
 * recorded result, or, when the run paused before its child ended, waits for that same child.
 */

/** Calls nest at most this deep below the caller's run (its own run is depth 0). */
export const maxCallDepth = 8;

export async function callAgent(session: Session, payload: Record<string, unknown>): Promise<CallResult> {
  const request = readCallRequest(payload);
  const differs = (e: EntryOf<'call'>) =>
    e.agentName === request.agentName && e.convid === request.convid ? null : `recorded call(${e.agentName}), now call(${request.agentName})`;
  const replayed = takeReplayed(session.journal, 'call', differs);
  if (replayed?.result) return replayed.result;
  const calls = session.run.agentCalls;
  if (!calls) throw new AgentTypeError('sys.call: agents cannot call agents here');
  let entry = replayed;
  if (!entry) {
    if (calls.depth >= maxCallDepth) {
      throw new AgentFault(`sys.call: calls nest at most ${maxCallDepth} deep below the caller's run, and this run is ${calls.depth} deep`);
    }
    const child = calls.childOf(session.journal.recorded.length, request.convid);
    entry = recordEntry<EntryOf<'call'>>(session.journal, { op: 'call', agentName: request.agentName, convid: request.convid, runId: child.runId, childConvid: child.convid });
  }
  session.children ??= new AbortController();
  const child = { runId: entry.runId, convid: entry.childConvid, newConversation: entry.convid === null, agentName: entry.agentName, inputs: request.inputs, live: !replayed };
  const result = await calls.run(child, session.children.signal);
  entry.result = result;
  chargeJournal(session.journal, JSON.stringify(result).length);
  return result;
}

interface CallRequest {
  agentName: string;
  inputs: JsonObject;
  convid: string | null;
}

/** The isolate sends the inputs as JSON text it made (bootstrap/sys.ts), so they are JSON by construction. */
function readCallRequest(payload: Record<string, unknown>): CallRequest {
  const { agentName, inputs, convid } = payload;
  if (typeof agentName !== 'string') throw new AgentTypeError('sys.call(agentName, inputs): agentName must be a string');
  if (convid !== null && typeof convid !== 'string') throw new AgentTypeError('sys.call: options.convid must be a string');
  const parsed: unknown = typeof inputs === 'string' ? JSON.parse(inputs) : undefined;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new AgentTypeError('sys.call: inputs must be a plain object');
  return { agentName, inputs: parsed as JsonObject, convid };
}
