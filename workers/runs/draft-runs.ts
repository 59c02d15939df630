import type { ExecutionResponse } from '../../shared/api.js';
import type { SecretSet } from '../../shared/agent-secrets.js';
import type { RunJobData } from '../../shared/jobs.js';
import type { TraceEvent } from '../../shared/trace.js';
import type { Db } from '../../db/database.js';
import { findDraft } from '../../db/drafts.repository.js';
import { withValidationFields } from '../../runs/execution-response.js';
import type { SandboxError } from '../sandbox/sandbox.types.js';
import type { AgentCode } from './agent-code-cache.js';
import { mapStackToSource, type SourceMapper } from './source-position.js';

/**
 * Draft validation runs (DESIGN §5): the draft's compiled code in place of a published version (its
 * revision standing for the version), and the validation fields on the response.
 */

/** The draft's code, or undefined when the draft is gone or its latest save does not compile. */
export async function findDraftCode(db: Db, draftId: string): Promise<AgentCode | undefined> {
  const draft = await findDraft(db, draftId);
  if (!draft?.code) return undefined;
  return { name: draft.agent_name, version: draft.revision, code: draft.code, sourceMap: draft.source_map ?? '' };
}

/**
 * The agent secrets a run reads (DESIGN §13): a draft's run only those an admin set for drafts of its
 * agent name, never the production ones. A draft's paused run resumes only as the same draft
 * (runs/conversation-rules.ts pausedBySameAgent), so the job's `draft` says which code runs.
 */
export function secretSetOf(data: RunJobData): SecretSet {
  return data.draft ? 'drafts' : 'production';
}

/** What a run of a draft found out beyond its response. */
export interface DraftRunReport {
  /** The error the sandbox reported, in the compiled code's positions, with its stack. */
  error?: SandboxError;
  toSource: SourceMapper;
  trace: readonly TraceEvent[];
}

/** A draft run's response with its validation fields: the runtime error's stack mapped to the draft, the trace for a non-streamed call. */
export function draftRunResponse(data: RunJobData, response: ExecutionResponse, report: DraftRunReport) {
  const stack = report.error?.stack ? mapStackToSource(report.error.stack, report.toSource, `${data.agentName}.ts`) : '';
  return withValidationFields(response, { stack, ...(data.events.kind === 'inbox' ? { trace: [...report.trace] } : {}) });
}
