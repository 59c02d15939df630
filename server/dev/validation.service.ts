import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { ExecutionResponse, Principal } from '../../shared/api.js';
import { withValidationFields, type ValidationFields } from '../../shared/draft-validation.js';
import type { Draft } from '../../db/schema.js';
import type { WebDeps } from '../deps.js';
import { executeAgent, type ExecCall } from '../exec/exec.service.js';
import { streamExecution, streamFinishedRun } from '../exec/exec.stream.js';
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
 * /api/dev/validateDraftStream (DESIGN §5): runs the caller's draft like execAgent runs an agent, with
 * `inputs.query` set to the validation query unless the call gives one, and tracing on. A draft that
 * does not compile is answered at once (errorInAgent with its compile errors), without a run.
 * Streamed or not, as the call asks.
 */
export async function validateDraft(deps: WebDeps, ctx: Context, call: ValidationCall): Promise<void> {
  const draft = await loadDraft(deps, call.body.draftid);
  ctx.state.agentName = draft.agent_name;
  if (draft.code === null) {
    const response = notCompiled(draft, call.body.convid ?? randomUUID());
    ctx.state.resultCode = response.resultCode;
    if (call.body.stream) return streamFinishedRun(ctx, { runId: randomUUID(), convid: response.convid, agentName: draft.agent_name }, response);
    ctx.body = response;
    return;
  }
  const { draftid: _draftid, inputs, ...rest } = call.body;
  const exec: ExecCall = {
    caller: call.caller,
    ...(call.sessionId ? { sessionId: call.sessionId } : {}),
    body: { ...rest, agentName: draft.agent_name, inputs: { ...inputs, query: inputs?.query ?? draft.validation_query } },
    requestId: call.requestId,
    requestIdGiven: call.requestIdGiven,
    draft: { id: draft.id },
  };
  if (call.body.stream) return streamExecution(deps, ctx, exec);
  ctx.body = await executeAgent(deps, exec);
}

function notCompiled(draft: Draft, convid: string): ExecutionResponse & ValidationFields {
  const first = draft.compile_errors[0];
  const error = { message: 'The draft does not compile.', ...(first ? { line: first.line, column: first.column } : {}) };
  const response = withValidationFields({ resultCode: 'errorInAgent', convid, agentName: draft.agent_name, output: [], error }, { trace: [] });
  return { ...response, compileErrors: draft.compile_errors, runtimeError: null };
}
