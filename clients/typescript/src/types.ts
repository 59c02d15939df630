/**
 * The API's shapes as a client sees them (the server's OpenAPI document at /api/openapi.json is the
 * reference; the project's tests check these against the server's own types).
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export type ResultCode = 'success' | 'ask' | 'callFailed' | 'failCommand' | 'errorInAgent' | 'unknownConversation' | 'timedOut' | 'stopped' | 'mustLogin' | 'unexpected';

export type OutputPart =
  | { type: 'text'; text: string }
  | { type: 'html'; html: string }
  | { type: 'image'; mimeType: string; data: string }
  | { type: 'image'; mimeType: string; url: string };

export type InputType = 'str' | 'password' | 'text' | 'chooseOne' | 'chooseMany';

export interface InputDescriptor {
  name: string;
  type: InputType;
  label: string | null;
  description: string | null;
  options: { value: string; label: string }[] | null;
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

/** How a run ended: `resultCode`, the output, and an ask or an error when there is one. */
export interface ExecutionResponse {
  resultCode: ResultCode;
  convid: string;
  agentName: string;
  output: OutputPart[];
  askInput?: AskInput;
  error?: ExecutionError;
}

/** The error body of the API outside an execution result: `{error: {code, message, details?}}`. */
export interface ErrorBody {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

/**
 * The events of a streamed run, numbered from 1 (`id`). The last is `end`, or `error` when the call
 * was refused after its stream had started (its conversation stayed busy past the server's wait, the
 * database unavailable): the client yields that `error` event, then throws its AgentexecError.
 */
export type RunEvent =
  | { event: 'start'; id: number; data: { convid: string; agentName: string; runId: string } }
  | { event: 'part'; id: number; data: OutputPart }
  | { event: 'delta'; id: number; data: { text: string } }
  | { event: 'trace'; id: number; data: { seq: number; at: string; kind: string; [field: string]: unknown } }
  | { event: 'end'; id: number; data: Omit<ExecutionResponse, 'output'> }
  | { event: 'error'; id: number; data: { error: ErrorBody } };

export type RunStatus = 'queued' | 'running' | 'ended';

/** A background run (`submit`, `getRun`, `wait`). */
export interface RunInfo {
  runId: string;
  convid: string;
  agentName: string;
  status: RunStatus;
  createdAt: string;
  endedAt?: string;
  /** Once ended: the execution response, with its output. */
  response?: ExecutionResponse;
  /** A child run's parent: the run whose agent called this one with sys.call. Absent for any other run. */
  parentRunId?: string;
}

export interface SubmittedRun {
  runId: string;
  convid: string;
  agentName: string;
  status: 'queued';
}

/** A webhook delivery's body (`run.ended`). */
export interface WebhookEvent {
  type: 'run.ended';
  timestamp: string;
  data: { runId: string; convid: string; agentName: string; response: ExecutionResponse };
}

/** A conversation of yours in `listConversations`. */
export interface ConversationSummary {
  convid: string;
  pinned: boolean;
  plan: 'free' | 'paid';
  createdAt: string;
  lastUsedAt: string;
  /** When it expires if unused until then; null while pinned. */
  expiresAt: string | null;
  /** The agent whose ask the conversation waits at, if any. */
  pausedBy: string | null;
  /** The query that started it (its first one); null when none had a query. */
  title: string | null;
  lastQuery: string | null;
  lastAgentName: string | null;
}

/** A page of your live conversations, most recently used first. */
export interface ConversationList {
  conversations: ConversationSummary[];
}

/** One call in a conversation read back. */
export interface ConversationTurn {
  runId: string;
  agentName: string;
  /** `inputs.query` of a new prompt; null for answers to an ask (answers are not kept). */
  query: string | null;
  resultCode: ResultCode;
  output: OutputPart[];
  /** When it started (ISO 8601). */
  at: string;
}

/** A conversation read back (`getConversation`): its turns, oldest first, and the ask it waits at. */
export interface ConversationRead {
  convid: string;
  pinned: boolean;
  expiresAt: string | null;
  pausedBy: string | null;
  askInput?: AskInput;
  turns: ConversationTurn[];
}

/** What `pinConversation` answers. */
export interface PinnedConversation {
  convid: string;
  pinned: boolean;
}

/** Which runs `listRuns` lists (admins only); every filter optional, all given must match. */
export interface RunListFilter {
  agentName?: string;
  /** Who called them: a user or a service account, by id. */
  account?: { kind: 'user' | 'serviceAccount'; id: string };
  resultCode?: ResultCode;
  /** Started at or after (ISO 8601). */
  from?: string;
  /** Started before (ISO 8601). */
  to?: string;
}

/** One ended run in `listRuns`: its record, never its inputs or output. */
export interface RunListEntry {
  runId: string;
  convid: string;
  agentName: string;
  agentVersion: number | null;
  /** Set for a draft validation run. */
  draftId: string | null;
  /** Who called it: `name` of a service account, `email` of a user (absent once deleted). */
  account: { kind: 'user' | 'serviceAccount'; id: string; name?: string; email?: string };
  requestId: string | null;
  resultCode: ResultCode;
  errorMessage: string | null;
  /** Started with `submit`. */
  background: boolean;
  submittedAt: string | null;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
}

/** A page of `listRuns`, newest first; `nextCursor` (null on the last page) asks for the next, older one. */
export interface RunListPage {
  runs: RunListEntry[];
  nextCursor: string | null;
}

/** A schedule to set (admins): an agent run as a service account's background run at each firing of `cron`. */
export interface ScheduleRequest {
  /** Unique: setting a name in use replaces that schedule. */
  name: string;
  agentName: string;
  /** The service account, by name, whose background runs they are (its limits, its webhook). */
  account: string;
  /** 5 fields, or 6 with seconds first (as BullMQ job schedulers read it). */
  cron: string;
  /** An IANA time zone (UTC when left out). */
  tz?: string;
  inputs?: JsonObject;
  /** A conversation of the account every firing continues; a new one each time when left out. */
  convid?: string;
}

/** A schedule as `setSchedule` and `listSchedules` answer it. */
export interface Schedule {
  name: string;
  agentName: string;
  account: string;
  cron: string;
  tz: string;
  inputs: JsonObject;
  convid: string | null;
  /** When it fires next (ISO 8601); null while its job scheduler is missing. */
  nextFiring: string | null;
  createdAt: string;
  updatedAt: string;
}

/** One entry of a run's timeline in `adminGetRun`: what it did, in order (replayed calls are not repeated). */
export type RunTimelineEntry =
  /** A sys.fetch: its URL without the query, its status (null when it failed, then `error`), the time to the response headers. */
  | { kind: 'fetch'; at: string; method: string; url: string; status: number | null; error: string | null; durationMs: number }
  | { kind: 'ask'; at: string; message: string }
  | { kind: 'log'; at: string; text: string }
  /** The run did more than the entries kept. */
  | { kind: 'truncated'; at: string };

/** Any caller's run in `adminGetRun` (admins only): queued, running or ended. */
export interface AdminRun {
  runId: string;
  convid: string;
  agentName: string;
  status: 'queued' | 'running' | 'ended';
  account: { kind: 'user' | 'serviceAccount'; id: string; name?: string; email?: string };
  agentVersion: number | null;
  draftId: string | null;
  requestId: string | null;
  background: boolean;
  submittedAt: string | null;
  /** Null while queued. */
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  resultCode: ResultCode | null;
  /** What the error report says of a failed run. */
  errorMessage: string | null;
  /** The execution response, output included, once ended. */
  response: ExecutionResponse | null;
  /** The run's OpenTelemetry trace id; null when its process did not trace. */
  traceId: string | null;
  /** Empty until it ended. */
  timeline: RunTimelineEntry[];
  /** A child run's parent: the run whose agent called this one with sys.call; null for any other run. */
  parentRunId: string | null;
}

/** One shard's run queue in `getQueues`. */
export interface ShardQueue {
  shard: number;
  paused: boolean;
  waiting: number;
  running: number;
  delayed: number;
}

/** One live worker process in `getQueues`. */
export interface WorkerStatus {
  id: string;
  host: string;
  pid: number;
  startedAt: string;
  seenAt: string;
  runsInFlight: number;
  concurrency: number;
  rssMb: number;
  memoryBudgetMb: number;
  /** False while over its memory budget or closing. */
  takingRuns: boolean;
}

/** The run queues and workers (`getQueues`, `pauseQueues`, `resumeQueues`; admins only). */
export interface QueuesState {
  /** Intake paused: no queued run starts until resumed. */
  paused: boolean;
  shards: ShardQueue[];
  workers: WorkerStatus[];
}
