/** The types of the HTTP API (spec §2), named and spelled as the spec spells them. */

export type ResultCode =
  | 'success'
  | 'ask'
  | 'callFailed'
  | 'failCommand'
  | 'errorInAgent'
  | 'unknownConversation'
  | 'timedOut'
  | 'stopped'
  | 'mustLogin'
  | 'unexpected';

export type OutputPart =
  | { type: 'text'; text: string }
  | { type: 'html'; html: string }
  | { type: 'image'; mimeType: string; data: string }
  | { type: 'image'; mimeType: string; url: string };

export type InputType = 'str' | 'password' | 'text' | 'chooseOne' | 'chooseMany';
export const inputTypes: readonly InputType[] = ['str', 'password', 'text', 'chooseOne', 'chooseMany'];

export interface InputOption {
  value: string;
  label: string;
}

/** Every descriptor carries all six fields, null where the agent gave none. */
export interface InputDescriptor {
  name: string;
  type: InputType;
  label: string | null;
  description: string | null;
  options: InputOption[] | null;
  default: string | string[] | null;
}

export interface AskInput {
  message: string;
  inputs: InputDescriptor[];
}

/** Answers to an ask, by input name: a string, or a list of strings for chooseMany. */
export type Answers = Record<string, string | string[]>;

export interface ExecutionError {
  message: string;
  line?: number;
  column?: number;
  /** Input name → what is wrong with the answer (an ask answered with missing or invalid values). */
  fields?: Record<string, string>;
}

export interface ExecutionResponse {
  resultCode: ResultCode;
  convid: string;
  agentName: string;
  output?: OutputPart[];
  askInput?: AskInput;
  error?: ExecutionError;
}

export type PrincipalKind = 'user' | 'serviceAccount';
export type Role = 'user' | 'developer' | 'admin';
export const roles: readonly Role[] = ['user', 'developer', 'admin'];
export type Plan = 'free' | 'paid';
export const plans: readonly Plan[] = ['free', 'paid'];

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
