import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';
import type { AskInput, HistoryEntry, JsonObject, Plan, PrincipalKind, ResultCode, Role } from '../shared/api.js';
import type { CompileError } from '../shared/compile-agent.js';
import type { MailKind } from '../shared/mail-messages.js';

/** jsonb columns: read as parsed JSON, written as a JSON string (pg would turn arrays into PG arrays). */
type Jsonb<T> = ColumnType<T, string, string>;
type CreatedAt = ColumnType<Date, Date | undefined, never>;
type Timestamp = ColumnType<Date, Date | undefined, Date>;

export interface UsersTable {
  id: Generated<string>;
  email: string;
  call_name: string;
  role: Role;
  plan: Plan;
  password_hash: string | null;
  /** Failed logins since the last success; at maxFailedLogins the password stops working until reset. */
  failed_logins: ColumnType<number, number | undefined, number>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface SessionsTable {
  id: Generated<string>;
  /** SHA-256 of the session token in the cookie (the token itself is never stored). */
  token_hash: string;
  user_id: string;
  created_at: Date;
  last_seen_at: Date;
}

/** The one live one-time code of a user (a new code replaces it). */
export interface EmailCodesTable {
  user_id: string;
  email: string;
  /** Keyed hash of the code, bound to the user and address. */
  code_hash: string;
  created_at: Date;
  expires_at: Date;
  wrong_tries: ColumnType<number, number | undefined, number>;
  used_at: Date | null;
}

export interface EmailCodeFailuresTable {
  user_id: string;
  at: Date;
}

export interface MailOutboxTable {
  id: Generated<string>;
  kind: MailKind;
  to_address: string;
  subject: string;
  /** The text, sealed with SECRETS_KEY; emptied once sent. */
  sealed_body: string;
  created_at: Date;
  sent_at: Date | null;
  attempts: ColumnType<number, number | undefined, number>;
  last_error: string | null;
}

export interface ServiceAccountsTable {
  id: Generated<string>;
  name: string;
  role: Role;
  plan: Plan;
  /** The public half of the key (`ak_<key_id>_<secret>`), used to find the row. */
  key_id: string;
  /** SHA-256 of the secret half: keys are 256-bit random, so a fast hash is the right one. */
  key_hash: string;
  created_at: CreatedAt;
  key_rotated_at: Timestamp;
}

export interface AgentsTable {
  name: string;
  latest_version: number;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface AgentVersionsTable {
  agent_name: string;
  version: number;
  source: string;
  code: string;
  source_map: string;
  created_at: CreatedAt;
}

export interface ConversationsTable {
  id: string;
  owner_kind: PrincipalKind;
  owner_id: string;
  plan: Plan;
  /** Agent variables, by agent name. */
  agent_vars: Jsonb<Record<string, JsonObject>>;
  conv_vars: Jsonb<JsonObject>;
  history: Jsonb<HistoryEntry[]>;
  pinned: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: CreatedAt;
  last_used_at: Timestamp;
  /** Raised by one at each commit of a run; the fence of DESIGN §11. */
  version: ColumnType<number, number | undefined, number>;
}

/** What a paused run needs to resume by replay (DESIGN §5). */
export interface PauseState {
  inputs: JsonObject;
  vars: JsonObject;
  conv: JsonObject;
  history: HistoryEntry[];
  randomSeed: number;
}

export interface PausedAsksTable {
  convid: string;
  agent_name: string;
  /** The published version that paused, or for a draft run the draft's revision. */
  agent_version: number;
  /** Set when a draft run paused: only that draft, at that revision, resumes it. */
  draft_id: ColumnType<string | null, string | null | undefined, string | null>;
  ask: Jsonb<AskInput>;
  /** JournalEntry[]; password answers inside are encrypted. */
  journal: Jsonb<unknown[]>;
  start_state: Jsonb<PauseState>;
  created_at: CreatedAt;
}

export interface ExecutionsTable {
  id: string;
  convid: string;
  agent_name: string;
  agent_version: number | null;
  /** Set for a draft validation run (agent_version is then the draft's revision). */
  draft_id: ColumnType<string | null, string | null | undefined, never>;
  principal_kind: PrincipalKind;
  principal_id: string;
  request_id: string | null;
  result_code: ResultCode;
  error_message: string | null;
  /** The execution response as sent (a fallback when the live answer is lost). */
  response: Jsonb<unknown>;
  /** inputs.query of a new prompt; null for an answer to an ask (answers are never kept) or a run that never ran. */
  query: ColumnType<string | null, string | null | undefined, never>;
  /** When the call was accepted and queued; null for records made before it was kept. */
  submitted_at: ColumnType<Date | null, Date | null | undefined, never>;
  /** A background run (submit): inserting its record queues its webhook delivery (migration 0008). */
  background: ColumnType<boolean, boolean | undefined, never>;
  started_at: Date;
  finished_at: Date;
  duration_ms: number;
  /** What the run fetched, asked and logged (shared/run-timeline.ts TimelineEntry[]); null when nothing. */
  timeline: ColumnType<unknown, string | null | undefined, never>;
  /** The run's OpenTelemetry trace id; null when the process did not trace. */
  trace_id: ColumnType<string | null, string | null | undefined, never>;
  /** A child run's parent (sys.call, DESIGN §19); null for any other run. */
  parent_run_id: ColumnType<string | null, string | null | undefined, never>;
}

export interface DraftsTable {
  id: string;
  /** Who saved it last; null when saved from the command line. */
  saved_by_kind: PrincipalKind | null;
  saved_by_id: string | null;
  agent_name: string;
  source: string;
  validation_query: string;
  /** Compiled code and its source map; null while the source does not compile. */
  code: string | null;
  source_map: string | null;
  compile_errors: Jsonb<CompileError[]>;
  /** 1 when created, +1 on every save. */
  revision: number;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** One call made with a bearer key, for the usage report. */
export interface UsageRecordsTable {
  id: Generated<string>;
  /** No foreign key: a deleted account's usage stays reportable. */
  service_account_id: string;
  account_name: string;
  /** The account's role at the time of the call. */
  role: Role;
  endpoint: string;
  agent_name: string | null;
  result_code: ResultCode | null;
  http_status: number;
  duration_ms: number;
  at: Date;
}

/** Secrets generated for a development set-up, shared by all its processes. */
export interface InstanceSecretsTable {
  name: string;
  value: string;
}

export interface Database {
  users: UsersTable;
  service_accounts: ServiceAccountsTable;
  agents: AgentsTable;
  agent_versions: AgentVersionsTable;
  conversations: ConversationsTable;
  paused_asks: PausedAsksTable;
  executions: ExecutionsTable;
  instance_secrets: InstanceSecretsTable;
  sessions: SessionsTable;
  email_codes: EmailCodesTable;
  email_code_failures: EmailCodeFailuresTable;
  mail_outbox: MailOutboxTable;
  usage_records: UsageRecordsTable;
  drafts: DraftsTable;
  agent_secrets: AgentSecretsTable;
  caller_limits: CallerLimitsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  schedules: SchedulesTable;
  idempotency_keys: IdempotencyKeysTable;
}

export interface WebhooksTable {
  service_account_id: string;
  url: string;
  /** The signing secret (whsec_…), sealed with SECRETS_KEY. */
  sealed_secret: string;
  created_at: Generated<Date>;
}

/** One run.ended event to deliver (the outbox, written with the execution record). `id` is its webhook-id. */
export interface WebhookDeliveriesTable {
  id: Generated<string>;
  run_id: string;
  service_account_id: string;
  status: ColumnType<'pending' | 'delivered' | 'failed', 'pending' | undefined, 'pending' | 'delivered' | 'failed'>;
  attempts: Generated<number>;
  created_at: Generated<Date>;
  delivered_at: ColumnType<Date | null, never, Date>;
  /** When an admin last asked to deliver it again (the attempts after it are a new round of retries). */
  requeued_at: ColumnType<Date | null, never, Date>;
}

export interface WebhookAttemptsTable {
  delivery_id: string;
  attempt: number;
  at: Generated<Date>;
  url: string;
  /** The receiver's HTTP status; null when no answer came (refused destination, timeout, connection error). */
  status: number | null;
  error: string | null;
}

export interface AgentSecretsTable {
  agent_name: string;
  /** The drafts' set (true) or the production set (shared/agent-secrets.ts SecretSet). */
  for_drafts: Generated<boolean>;
  key: string;
  /** shared/agent-secrets.ts sealSecret. */
  sealed: string;
  updated_at: Generated<Date>;
}

/** Limits an admin set for one account (DESIGN §16); null = the default from config. */
export interface CallerLimitsTable {
  principal_kind: PrincipalKind;
  principal_id: string;
  runs_per_minute: number | null;
  runs_in_flight: number | null;
  weight: number | null;
  updated_at: Generated<Date>;
}

/** A schedule (DESIGN §19): an agent run as a service account's background run at each firing of a cron expression. */
export interface SchedulesTable {
  id: Generated<string>;
  name: string;
  agent_name: string;
  service_account_id: string;
  /** 5 fields, or 6 with seconds first, as BullMQ's job schedulers read it. */
  cron: string;
  /** An IANA time zone. */
  tz: string;
  inputs: Jsonb<JsonObject>;
  /** The conversation every firing continues; null: a new conversation each time. */
  convid: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export type User = Selectable<UsersTable>;
export type ServiceAccount = Selectable<ServiceAccountsTable>;
export type Session = Selectable<SessionsTable>;
export type OutboxMail = Selectable<MailOutboxTable>;
export type AgentVersion = Selectable<AgentVersionsTable>;
export type Conversation = Selectable<ConversationsTable>;
export type PausedAsk = Selectable<PausedAsksTable>;
export type NewExecution = Insertable<ExecutionsTable>;
export type Draft = Selectable<DraftsTable>;
export type ScheduleRow = Selectable<SchedulesTable>;
export type CallerLimitsRow = Selectable<CallerLimitsTable>;

/** An Idempotency-Key's record (DESIGN §4): the run the caller's first call with the key started. */
export interface IdempotencyKeysTable {
  principal_kind: PrincipalKind;
  principal_id: string;
  key: string;
  run_id: string;
  convid: string;
  agent_name: string;
  /** Keyed digest of the request (the inputs may hold passwords, so never the request itself). */
  fingerprint: string;
  created_at: ColumnType<Date, Date | undefined, never>;
}

export type NewIdempotencyKey = Insertable<IdempotencyKeysTable>;
