/**
 * The `sys` object an agent receives (DESIGN §5). Import it as a type only:
 *   import type { Sys } from './sys';
 * Type imports are erased at compile time; an agent can import nothing else.
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export type InputType = 'str' | 'password' | 'text' | 'chooseOne' | 'chooseMany';

/** An input to ask for; null reads as not given (so a child's `askInput` can be asked as it is). */
export interface AskInputSpec {
  name: string;
  type: InputType;
  label?: string | null;
  description?: string | null;
  /** Required for chooseOne and chooseMany: values, or {value, label} pairs. */
  options?: (string | { value: string; label: string })[] | null;
  default?: string | string[] | null;
}

export interface FetchResponse {
  status: number;
  ok: boolean;
  headers: Record<string, string>;
  text: string;
  json(): any;
}

export interface FetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Default 10,000. Without `stream`: the whole request. With it: the headers, then each wait for the next chunk. */
  timeoutMs?: number;
}

/** A server-sent event parsed from a streamed body (`event` is "message" when the stream named none). */
export interface ServerSentEvent {
  event: string;
  data: string;
  /** The last event id the stream sent; "" when none. */
  id: string;
}

/**
 * The answer of `sys.fetch(url, {stream: true})`, at the headers. `body`, `events()`, `text()` and
 * `json()` all read the one body, in turn. Leaving a `for await` early closes the connection; an
 * error (timeout, cut connection, more than 5 MiB in all) is thrown by the read that meets it.
 */
export interface StreamedFetchResponse {
  status: number;
  ok: boolean;
  headers: Record<string, string>;
  /** The body's text as it arrives. */
  body: AsyncIterable<string>;
  events(): AsyncIterable<ServerSentEvent>;
  /**
   * Writes the rest of the body to the caller as it arrives, as sys.write would, without running the
   * agent's code for each piece (the fast way to stream an LLM's tokens), and resolves with all it wrote.
   * With `field` (a dot path, e.g. "choices.0.delta.content" for an OpenAI-compatible chat stream) the
   * body is read as server-sent events and the string at that path of each event's JSON data is
   * written; events without one (`[DONE]`) are skipped.
   */
  relay(options?: { field?: string }): Promise<string>;
  /** The rest of the body. */
  text(): Promise<string>;
  json(): Promise<any>;
}

/** An output part, as an execution response carries it. */
export type OutputPart =
  | { type: 'text'; text: string }
  | { type: 'html'; html: string }
  | { type: 'image'; mimeType: string; data: string }
  | { type: 'image'; mimeType: string; url: string };

/** The ask a child ended on: every descriptor carries all six fields (null where the agent gave none). */
export interface AskInput {
  message: string;
  inputs: {
    name: string;
    type: InputType;
    label: string | null;
    description: string | null;
    options: { value: string; label: string }[] | null;
    default: string | string[] | null;
  }[];
}

/**
 * What `sys.call` answers: how the child run ended (its execution response) and its run id. Besides the
 * result codes of a run, `agentNotFound` (no agent of that name: no run was made), `rateLimited` (your
 * account's limits refused the child), `conversationBusy` and `unavailable` (the child could not start).
 */
export interface CallResult {
  resultCode:
    | 'success'
    | 'ask'
    | 'callFailed'
    | 'failCommand'
    | 'errorInAgent'
    | 'unknownConversation'
    | 'timedOut'
    | 'stopped'
    | 'mustLogin'
    | 'unexpected'
    | 'agentNotFound'
    | 'rateLimited'
    | 'conversationBusy'
    | 'unavailable';
  /** The child's conversation: pass it back to continue it (answer its ask). Null when no run was made. */
  convid: string | null;
  runId: string | null;
  output: OutputPart[];
  /** When the child ended on an ask: answer it with `sys.call(agentName, answers, {convid})`. */
  askInput?: AskInput;
  error?: { message: string; line?: number; column?: number; fields?: Record<string, string> };
}

export interface Sys {
  agentName: string;
  convid: string;
  inputs: JsonObject;
  query: string | undefined;
  caller: { kind: 'user' | 'serviceAccount'; id: string; role: 'user' | 'developer' | 'admin' };
  /**
   * The secrets an admin set for this agent name (secrets:set), read-only: an API key, a base URL. A
   * draft reads only those set for drafts of the name (secrets:set --drafts), never the production ones.
   */
  readonly secrets: Readonly<Record<string, string | undefined>>;
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
  fetch(url: string, init: FetchInit & { stream: true }): Promise<StreamedFetchResponse>;
  fetch(url: string, init?: FetchInit & { stream?: false }): Promise<FetchResponse>;
  sleep(ms: number): Promise<void>;
  /**
   * Runs another agent (its latest version) as a child run of the same caller, in a new conversation
   * unless `convid` names one of yours, and resolves with how it ended; it does not throw for the
   * child's failures. Calls run in parallel (`Promise.all`); each counts as a pending call. Inputs must be
   * a plain JSON object (anything else throws a TypeError). Calls nest at most 8 deep below the
   * caller's run: a call deeper than that ends the calling run `errorInAgent`. If this run ends (other
   * than on an ask), the children still running are stopped.
   */
  call(agentName: string, inputs?: JsonObject, options?: { convid?: string }): Promise<CallResult>;
  now(): number;
  log(...args: unknown[]): void;
}
