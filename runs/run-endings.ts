import type { AskInput, ExecutionError, ExecutionResponse, ResultCode } from '../shared/api.js';
import type { ValidationFields } from '../shared/draft-validation.js';
import type { ErrorCode } from '../shared/errors.js';
import type { RunJobData } from '../shared/jobs.js';
import type { Draft } from '../db/schema.js';
import { executionResponse, jobResponse, withValidationFields } from './execution-response.js';

/**
 * Every way a call ends that the agent's own code does not decide, with its result code (or refusal)
 * and its message, a maker each. The endings the agent's run decides (success, ask, failCommand,
 * callFailed, errorInAgent, timedOut, unexpected, and stopped or mustLogin mid-run) are made in
 * workers/sandbox/sandbox-endings.ts. docs/architecture.md has the table of both.
 */

/**
 * How a run ended, as the run's lifecycle answers its call (the one name for it outside the sandbox):
 * an execution response (HTTP 200), or refused with an error (nothing kept).
 */
export type RunEnding = { kind: 'response'; response: ExecutionResponse } | { kind: 'refused'; code: ErrorCode; message: string };

// Endings decided by the worker before the agent runs (the call is recorded like any run).

/** `unknownConversation`: not the caller's, expired, or paused by another agent (conversation-rules.ts). */
export function unknownConversation(data: RunJobData): ExecutionResponse {
  return jobResponse(data, 'unknownConversation', { error: { message: 'The conversation is unknown, expired, or paused by another agent.' } });
}

/** `unknownConversation`: a draft's pause, when the draft was saved again since (the pause cannot resume). */
export function draftChanged(data: RunJobData): ExecutionResponse {
  return jobResponse(data, 'unknownConversation', { error: { message: 'The draft was saved again after this conversation paused; start a new validation.' } });
}

/** `ask` again: the answers to the pause's ask are missing or not valid; `fields` says which. The pause is kept. */
export function answersRefused(data: RunJobData, ask: AskInput, fields: Record<string, string>): ExecutionResponse {
  return jobResponse(data, 'ask', { error: { message: 'Some answers are missing or not valid.', fields }, askInput: ask });
}

/** `stopped` or `mustLogin`: the call was stopped (a cancel, or its session ended) while it waited for its turn. */
export function stoppedWaiting(data: RunJobData, stop: { resultCode: ResultCode; error: ExecutionError }): ExecutionResponse {
  return jobResponse(data, stop.resultCode, { error: stop.error });
}

// Endings decided by the web process without a run.

/** `errorInAgent`: a draft validation of a draft that does not compile, answered at its first compile error. */
export function draftNotCompiled(draft: Draft, convid: string): ExecutionResponse & ValidationFields {
  const first = draft.compile_errors[0];
  const error = { message: 'The draft does not compile.', ...(first ? { line: first.line, column: first.column } : {}) };
  const response = withValidationFields(executionResponse({ convid, agentName: draft.agent_name }, 'errorInAgent', { error }), { trace: [] });
  return { ...response, compileErrors: draft.compile_errors, runtimeError: null };
}

/** Endings of a run no agent ran for, decided outside the run (end-without-run.ts carries them out). */
export type EndingWithoutRun = 'cancelledInQueue' | 'noWorkerAnswered' | 'jobFailed';

/** What an ending without a run comes to. */
export interface EndingWithoutRunRule {
  resultCode: ResultCode;
  /** What the caller is told (`error.message`). */
  message: string;
  /** What the error report says (a failed job's own reason replaces it). */
  reason: string;
  /** Counted in the run metrics (only a failed job: a cancelled one is not, as before). */
  counted: boolean;
}

/** Each ending without a run: its result code, message and error report reason. */
export const endingsWithoutRun: Record<EndingWithoutRun, EndingWithoutRunRule> = {
  /** `stopped`: cancelled while its job waited in the queue (no worker had it); withdrawn by the web process. */
  cancelledInQueue: { resultCode: 'stopped', message: 'the run was stopped', reason: 'cancelled before it started', counted: false },
  /** `unexpected`: the web process stopped waiting (no answer in time, its job lost); its caller is told 503. */
  noWorkerAnswered: { resultCode: 'unexpected', message: 'No worker answered in time.', reason: 'given up: no answer from a worker in time', counted: false },
  /** `unexpected`: the job failed (its worker died and the stall checker failed it, or the processor threw). */
  jobFailed: { resultCode: 'unexpected', message: 'The run ended unexpectedly.', reason: 'the job failed', counted: true },
};

// Refusals: the call gets an HTTP error instead of an execution response, and nothing is kept.

/** 409: the call could not start within CONV_WAIT_MS of arriving. */
export function conversationBusy(): RunEnding {
  return { kind: 'refused', code: 'conversationBusy', message: 'The conversation is busy with other calls; try again.' };
}

/** 409: the conversation moved on while the run ran (a stale writer, commit.ts): nothing of it is kept. */
export function conversationChanged(): RunEnding {
  return {
    kind: 'refused',
    code: 'conversationBusy',
    message: 'The conversation changed while this call ran (another call was committed first); nothing of this call was kept. Try again.',
  };
}

/** 404: no published agent of that name, or the draft is gone or no longer compiles. */
export function agentNotFound(data: RunJobData): RunEnding {
  if (data.draft) return { kind: 'refused', code: 'draftNotFound', message: 'The draft is gone or no longer compiles; save it again.' };
  return { kind: 'refused', code: 'agentNotFound', message: `No agent is named ${data.agentName}.` };
}

/** 503: PostgreSQL went away during the run; nothing was committed. */
export function databaseUnavailable(): RunEnding {
  return { kind: 'refused', code: 'unavailable', message: 'The database is unavailable; nothing of the run was kept. Try again shortly.' };
}

// Not an ending: the call is not over, its run starts again.

/**
 * A run that started from something not kept after all: nothing of it was kept or sent, and its call
 * runs again. `versionMoved`: it started on the agent version this process read last without reading
 * it again, and a newer one had been published (its commit, fenced on that version, kept nothing).
 * `baseNotKept`: it started from the conversation as the call before it left it, and that call's
 * commit did not keep it (conversation-commits.ts).
 */
export interface RunAgain {
  kind: 'runAgain';
  why: 'versionMoved' | 'baseNotKept';
}

export function versionMoved(): RunAgain {
  return { kind: 'runAgain', why: 'versionMoved' };
}

export function baseNotKept(): RunAgain {
  return { kind: 'runAgain', why: 'baseNotKept' };
}

export function isRunAgain(value: object): value is RunAgain {
  return 'kind' in value && value.kind === 'runAgain';
}
