/** The API's types the app uses: the shared ones (spec §2) and those of the endpoints only the app calls. */
import type { AskInput, ExecutionResponse, OutputPart, ResultCode } from '../../../shared/api.js';

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

export interface ConversationSummary {
  convid: string;
  pinned: boolean;
  plan: 'free' | 'paid';
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string | null;
  pausedBy: string | null;
  title: string | null;
  lastQuery: string | null;
  lastAgentName: string | null;
}

/** /api/conv/get: a conversation read back. */
export interface ConversationRead {
  convid: string;
  pinned: boolean;
  expiresAt: string | null;
  pausedBy: string | null;
  askInput?: AskInput;
  turns: { runId: string; agentName: string; query: string | null; resultCode: ResultCode; output: OutputPart[]; at: string }[];
}

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
