import type { z } from 'zod';
import type * as api from './api.schemas.js';
import { inputType, plan, role } from './api.schemas.js';

/**
 * The types of the HTTP API (spec §2), named and spelled as the spec spells them. Those of response
 * bodies are inferred from their zod schemas in api.schemas.ts, the one definition of each shape.
 */

export type ResultCode = z.infer<typeof api.resultCode>;

export type OutputPart = z.infer<typeof api.outputPart>;

export type InputType = z.infer<typeof api.inputType>;
export const inputTypes: readonly InputType[] = inputType.options;

export type InputOption = z.infer<typeof api.inputOption>;

/** Every descriptor carries all six fields, null where the agent gave none. */
export type InputDescriptor = z.infer<typeof api.inputDescriptor>;

export type AskInput = z.infer<typeof api.askInput>;

/** Answers to an ask, by input name: a string, or a list of strings for chooseMany. */
export type Answers = Record<string, string | string[]>;

export type ExecutionError = z.infer<typeof api.executionError>;

export type ExecutionResponse = z.infer<typeof api.executionResponse>;

/** The body of every error outside an execution result (DESIGN §2). */
export type ErrorBody = z.infer<typeof api.errorBody>;

export type UserProfile = z.infer<typeof api.userProfile>;
export type ConversationSummary = z.infer<typeof api.conversationSummary>;

export type PrincipalKind = z.infer<typeof api.principalKind>;
export type Role = z.infer<typeof api.role>;
export const roles: readonly Role[] = role.options;
export type Plan = z.infer<typeof api.plan>;
export const plans: readonly Plan[] = plan.options;

/** Who makes a call: what an agent sees as sys.caller, plus the plan its conversations take. */
export interface Principal {
  kind: PrincipalKind;
  id: string;
  role: Role;
  plan: Plan;
}

export interface HistoryEntry {
  agentName: string;
  query: string | null;
  resultCode: ResultCode;
  at: string;
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** Agent names: DESIGN §5. */
export const agentNamePattern = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
