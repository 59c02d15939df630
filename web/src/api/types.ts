/** The API's types the app uses: the shared ones (spec §2) and those of the endpoints only the app calls. */
import type { ExecutionResponse } from '../../../shared/api.js';

export type { Answers, AskInput, ExecutionError, ExecutionResponse, InputDescriptor, OutputPart, ResultCode } from '../../../shared/api.js';
export type { TraceEvent } from '../../../shared/trace.js';

export interface UserProfile {
  kind: 'user' | 'serviceAccount';
  id: string;
  callName: string;
  role: 'user' | 'developer' | 'admin';
  plan: 'free' | 'paid';
  email?: string;
}

export interface PasswordHelp {
  rules: { id: string; text: string }[];
  minLength: number;
  maxLength: number;
}

/** /api/conv/list's entries and /api/conv/get's answer, as the TypeScript client types them. */
export type { ConversationRead, ConversationSummary } from '../../../clients/typescript/src/types';

export interface CompileError {
  line: number;
  column: number;
  message: string;
}

export interface RuntimeError {
  message: string;
  line: number | null;
  column: number | null;
  stack?: string | null;
}

/** The `end` event of a stream: the execution response without output, plus the validation fields for a draft. */
export type RunEndData = Omit<ExecutionResponse, 'output'> & {
  validationSuccess?: boolean;
  compileErrors?: CompileError[];
  runtimeError?: RuntimeError | null;
};

export interface RunStartData {
  convid: string;
  agentName: string;
  runId: string;
}

export interface Draft {
  draftid: string;
  agentName: string;
  source: string;
  validationQuery: string;
  compileErrors: CompileError[];
  updatedAt: string;
}

export interface AgentList {
  agents: { agentName: string; version: number; publishedAt: string }[];
  drafts: { draftid: string; agentName: string; compiles: boolean; updatedAt: string }[];
}
