/**
 * The `sys` object an agent receives (DESIGN §5). Import it as a type only:
 *   import type { Sys } from './sys';
 * Type imports are erased at compile time; an agent can import nothing else.
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export type InputType = 'str' | 'password' | 'text' | 'chooseOne' | 'chooseMany';

export interface AskInputSpec {
  name: string;
  type: InputType;
  label?: string;
  description?: string;
  /** Required for chooseOne and chooseMany: values, or {value, label} pairs. */
  options?: (string | { value: string; label: string })[];
  default?: string | string[];
}

export interface FetchResponse {
  status: number;
  ok: boolean;
  headers: Record<string, string>;
  text: string;
  json(): any;
}

export interface Sys {
  agentName: string;
  convid: string;
  inputs: JsonObject;
  query: string | undefined;
  caller: { kind: 'user' | 'serviceAccount'; id: string; role: 'user' | 'developer' | 'admin' };
  /** This agent's variables in this conversation: mutate them; kept when the run ends in success or ask. */
  vars: JsonObject;
  /** Variables shared by every agent of the conversation. */
  conv: JsonObject;
  history: { agentName: string; query: string | null; resultCode: string; at: string }[];
  say(markdown: string): void;
  html(html: string): void;
  image(base64OrUrl: string, mimeType: string): void;
  write(text: string): void;
  ask(spec: { message: string; inputs: AskInputSpec[] }): Promise<Record<string, string | string[]>>;
  fail(message: string): never;
  fetch(url: string, init?: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number }): Promise<FetchResponse>;
  sleep(ms: number): Promise<void>;
  now(): number;
  log(...args: unknown[]): void;
}
