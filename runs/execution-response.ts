import type { AskInput, ExecutionError, ExecutionResponse, OutputPart, ResultCode } from '../shared/api.js';
import type { ValidationFields } from '../shared/draft-validation.js';
import type { RunJobData } from '../shared/jobs.js';
import type { TraceEvent } from '../shared/trace.js';

/**
 * The execution response (spec 2.2, DESIGN §4) is put together here and nowhere else, and so is a draft
 * validation's (spec 2.4: the same plus the validation fields, whose schema is shared/draft-validation.ts).
 */

/** What a response says beyond its result code. */
export interface ResponseParts {
  output?: OutputPart[];
  error?: ExecutionError;
  askInput?: AskInput;
}

/** The execution response of a run that ended with `resultCode`. */
export function executionResponse(run: Pick<RunJobData, 'convid' | 'agentName'>, resultCode: ResultCode, parts: ResponseParts = {}): ExecutionResponse {
  const response: ExecutionResponse = { resultCode, convid: run.convid, agentName: run.agentName, output: parts.output ?? [] };
  if (parts.error) response.error = parts.error;
  if (parts.askInput) response.askInput = parts.askInput;
  return response;
}

/** The execution response a job's caller gets: for a draft validation, with the validation fields. */
export function jobResponse(data: Pick<RunJobData, 'convid' | 'agentName' | 'draft' | 'events'>, resultCode: ResultCode, parts: ResponseParts = {}): ExecutionResponse {
  return responseForJob(data, executionResponse(data, resultCode, parts));
}

/** The response as a job's caller gets it: with the validation fields when the job is a draft validation. */
export function responseForJob(data: Pick<RunJobData, 'draft' | 'events'>, response: ExecutionResponse): ExecutionResponse {
  if (!data.draft) return response;
  return withValidationFields(response, data.events.kind === 'inbox' ? { trace: [] } : {});
}

/**
 * The response with the validation fields: validationSuccess (true when the run ended `success` or
 * `ask`), compileErrors (empty: a draft that does not compile is answered before it is queued) and
 * runtimeError (for any other ending; `stack` in the draft's own positions, '' when unknown). `trace`
 * only when given: a non-streamed answer carries it, a stream sent its events as they happened.
 */
export function withValidationFields(response: ExecutionResponse, extras: { stack?: string; trace?: TraceEvent[] } = {}): ExecutionResponse & ValidationFields {
  const success = response.resultCode === 'success' || response.resultCode === 'ask';
  const error = response.error;
  const runtimeError = success || !error ? null : { message: error.message, line: error.line ?? null, column: error.column ?? null, stack: extras.stack ?? '' };
  return { ...response, validationSuccess: success, compileErrors: [], runtimeError, ...(extras.trace ? { trace: extras.trace } : {}) };
}
