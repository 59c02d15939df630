import { randomUUID } from 'node:crypto';
import type { ExecutionResponse, Principal } from '../../shared/api.js';
import type { ValidationFields } from '../../shared/draft-validation.js';
import { draftNotCompiled } from '../../runs/run-endings.js';
import type { WebDeps } from '../deps.js';
import type { ExecCall } from '../exec/exec.service.js';
import type { ValidateDraftBody } from './dev.schemas.js';
import { loadDraft } from './drafts.service.js';

export interface ValidationCall {
  caller: Principal;
  sessionId?: string;
  body: ValidateDraftBody;
  requestId: string;
  requestIdGiven: boolean;
}

/**
 * How a draft validation goes, for the route to carry out: answered at once without a run (a draft
 * that does not compile), or run like an execAgent call of the draft. Either way it names the draft's
 * agent (for the usage report).
 */
export type DraftValidation =
  | { kind: 'answered'; agentName: string; response: ExecutionResponse & ValidationFields }
  | { kind: 'run'; agentName: string; call: ExecCall };

/**
 * /api/dev/validateDraftStream (DESIGN §5): runs the caller's draft like execAgent runs an agent, with
 * `inputs.query` set to the validation query unless the call gives one, and tracing on. A draft that
 * does not compile is answered at once (errorInAgent with its compile errors), without a run. A draft
 * that does not exist is a 404 draftNotFound.
 */
export async function prepareValidation(deps: Pick<WebDeps, 'db' | 'clock'>, call: ValidationCall): Promise<DraftValidation> {
  const draft = await loadDraft(deps, call.body.draftid);
  if (draft.code === null) return { kind: 'answered', agentName: draft.agent_name, response: draftNotCompiled(draft, call.body.convid ?? randomUUID()) };
  const { draftid: _draftid, inputs, ...rest } = call.body;
  const exec: ExecCall = {
    caller: call.caller,
    ...(call.sessionId ? { sessionId: call.sessionId } : {}),
    body: { ...rest, agentName: draft.agent_name, inputs: { ...inputs, query: inputs?.query ?? draft.validation_query } },
    requestId: call.requestId,
    requestIdGiven: call.requestIdGiven,
    draft: { id: draft.id },
  };
  return { kind: 'run', agentName: draft.agent_name, call: exec };
}
