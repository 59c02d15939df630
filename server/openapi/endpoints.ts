import { z } from 'zod';
import type { Role } from '../../shared/api.js';
import * as api from '../../shared/api.schemas.js';
import type { ErrorCode } from '../../shared/errors.js';
import { callerLoadAnswer, deleteSecretBody, getLimitsBody, limitsAnswer, listSecretsBody, reportBody, setLimitsBody, setSecretBody } from '../admin/admin.schemas.js';
import { listRunsBody, runListAnswer } from '../admin/run-list.schemas.js';
import { deleteScheduleAnswer, listSchedulesAnswer, scheduleNameBody, setScheduleAnswer, setScheduleBody } from '../admin/schedules.schemas.js';
import { accountListAnswer, createdUserAnswer, createServiceAccountBody, createUserBody, deletedServiceAccountAnswer, serviceAccountBody, serviceAccountKeyAnswer, setRoleAnswer, setRoleBody } from '../admin/accounts.schemas.js';
import { deliveryPageAnswer, listDeliveriesBody, redeliverAnswer, redeliverBody, webhookListAnswer } from '../admin/webhook-log.schemas.js';
import { adminRunAnswer, adminRunBody } from '../admin/run-detail.schemas.js';
import { queuesAnswer } from '../admin/queues.schemas.js';
import { createPasswordBody, emailCodeBody, emptyBody, loginBody } from '../auth/auth.schemas.js';
import { getBody, listBody, pinBody } from '../conv/conv.schemas.js';
import { draftBody, listAgentsBody, saveDraftBody, validateDraftBody } from '../dev/dev.schemas.js';
import { attachBody, cancelBody, execAgentBody, execAgentStreamBody, getRunBody, submitBody, waitBody } from '../exec/exec.schemas.js';
import { agentList, draftAnswer, publishedDraft, savedDraft, validationResponse } from '../../shared/draft-validation.js';

/** Who may call an endpoint. */
export type Access =
  /** No credential. */
  | { kind: 'anyone' }
  /** No credential, but a browser call from the server's own origin (or ALLOWED_ORIGINS), as JSON (DESIGN §3 CSRF). */
  | { kind: 'sameOrigin' }
  /** Exactly one of a bearer key and a session cookie, of a caller with one of these roles. */
  | { kind: 'credential'; roles: readonly Role[] };

const anyone: Access = { kind: 'anyone' };
const sameOrigin: Access = { kind: 'sameOrigin' };
const anyCaller: Access = { kind: 'credential', roles: ['user', 'developer', 'admin'] };
const admins: Access = { kind: 'credential', roles: ['admin'] };
const developers: Access = { kind: 'credential', roles: ['developer', 'admin'] };

/** Request headers an endpoint reads besides the credential (their meaning is in openapi-document.ts). */
export type RequestHeader = 'Idempotency-Key' | 'Last-Event-ID';

/** One endpoint as /api/openapi.json documents it. */
export interface Endpoint {
  method: 'get' | 'post';
  path: string;
  /** Defaults to the last segment of the path, which for /api/* is the name the spec gives the call. */
  operationId?: string;
  summary: string;
  description?: string;
  access: Access;
  /** The JSON body a POST takes: the schema the route validates it with. */
  request?: z.ZodType;
  /** The JSON body of a success (200, or `status`). */
  response?: z.ZodType;
  /** The success status when it is not 200 (submit: 202). */
  status?: 202;
  /** Other statuses answered with the same body as a 200 (/readyz: 503). */
  responseAlsoWith?: readonly number[];
  /** A 200 that is a server-sent event stream: always, or when the body says `stream: true`. */
  events?: 'always' | 'whenStreamTrue';
  /** A 200 that is neither JSON nor events. */
  otherContent?: { mediaType: string; description: string };
  /** Error codes of this endpoint's own, beyond those every endpoint of its method and access can answer. */
  errors?: readonly ErrorCode[];
  headers?: readonly RequestHeader[];
}

/**
 * Every endpoint the server answers, in the order the document lists them. Adding an endpoint is
 * adding its entry here; the test of the document fails for a POST route under /api that has none.
 */
/** What setSecret and deleteSecret answer: which secret (never its value). */
const secretNameAnswer = z.object({ agentName: z.string(), key: z.string() });

/** What submit answers. */
const submittedRun = z.object({ runId: z.uuid(), convid: z.uuid(), agentName: z.string(), status: z.enum(['queued', 'running', 'ended']) });

/** What getRun and wait answer (server/exec/background-runs.ts RunInfo). */
const runInfo = z.object({
  runId: z.uuid(),
  convid: z.uuid(),
  agentName: z.string(),
  status: z.enum(['queued', 'running', 'ended']),
  createdAt: z.iso.datetime(),
  endedAt: z.iso.datetime().optional(),
  response: api.executionResponse.optional().describe('Once the run has ended.'),
  parentRunId: z.uuid().optional().describe("A child run's parent: the run whose agent called this one with sys.call. Absent for any other run."),
});

/** What /api/conv/get answers. */
const conversationRead = z.object({
  convid: z.uuid(),
  pinned: z.boolean(),
  expiresAt: z.iso.datetime().nullable(),
  pausedBy: z.string().nullable(),
  askInput: api.askInput.optional(),
  turns: z.array(
    z.object({ runId: z.uuid(), agentName: z.string(), query: z.string().nullable(), resultCode: api.resultCode, output: z.array(api.outputPart), at: z.iso.datetime() }),
  ),
});

export const endpoints: readonly Endpoint[] = [
  // Execution (spec §2, DESIGN §4).
  {
    method: 'post',
    path: '/api/exec/execAgent',
    summary: 'Run an agent, or answer its ask',
    description:
      'Omit convid to start a conversation; send it back to continue. To answer an ask, call again with the same agentName and convid and the answers in inputs. A run that ran answers 200 whatever its resultCode. With `stream: true` the answer is the server-sent event stream that /api/exec/execAgentStream documents (the same call); this entry documents the JSON answer only, so that a generated client types it without narrowing.',
    access: anyCaller,
    request: execAgentBody,
    response: api.executionResponse,
    errors: ['agentNotFound', 'conversationBusy', 'rateLimited'],
    headers: ['Idempotency-Key'],
  },
  {
    method: 'post',
    path: '/api/exec/execAgentStream',
    summary: 'Run an agent, or answer its ask, streamed: execAgent with `stream: true`',
    description:
      'The execAgent body (`stream` may be left out; if sent it must be true), answered with a server-sent event stream (the run id in X-Run-Id): start, then part, delta, and one end (the execution response without output). A call refused before its stream starts (an unknown agent, a rate limit, `ifBusy: reject`) is answered with the error status and body, no stream. A retry with the same Idempotency-Key and Last-Event-ID joins the run and sends only the later events.',
    access: anyCaller,
    request: execAgentStreamBody,
    events: 'always',
    errors: ['agentNotFound', 'conversationBusy', 'rateLimited'],
    headers: ['Idempotency-Key', 'Last-Event-ID'],
  },
  {
    method: 'post',
    path: '/api/exec/attach',
    summary: 'Re-attach to a run: yours by runId, or your last streamed call on a conversation',
    description:
      'Send either convid or runId. Sends the events after Last-Event-ID, then the rest, for STREAM_REPLAY_SECONDS after the call; a run attached by runId whose events are no longer kept is sent whole, rebuilt from its record.',
    access: anyCaller,
    request: attachBody,
    events: 'always',
    errors: ['notFound'],
    headers: ['Last-Event-ID'],
  },
  {
    method: 'post',
    path: '/api/exec/cancel',
    summary: 'Stop your calls going on a conversation, a run, or the call sent with a request id',
    description: 'Send one of convid, runId, requestId (the X-Request-Id or Idempotency-Key the call was sent with). The call ends `stopped`.',
    access: anyCaller,
    request: cancelBody,
    response: api.cancelAnswer,
  },
  // Background runs (DESIGN §14).
  {
    method: 'post',
    path: '/api/exec/submit',
    summary: 'Start a background run: answered as soon as it is queued',
    description: 'The execAgent body without stream. Follow the run with getRun, wait or attach (by runId); cancel it by runId.',
    access: anyCaller,
    request: submitBody,
    response: submittedRun,
    status: 202,
    errors: ['agentNotFound', 'conversationBusy', 'rateLimited'],
    headers: ['Idempotency-Key'],
  },
  {
    method: 'post',
    path: '/api/exec/getRun',
    summary: "A run's status, and its execution response (output included) once it has ended",
    access: anyCaller,
    request: getRunBody,
    response: runInfo,
    errors: ['notFound'],
  },
  {
    method: 'post',
    path: '/api/exec/wait',
    summary: 'The run as soon as it has ended, or at timeoutMs (≤ 60,000; default 30,000) with its status then',
    access: anyCaller,
    request: waitBody,
    response: runInfo,
    errors: ['notFound'],
  },
  // Signing in (DESIGN §3).
  {
    method: 'post',
    path: '/api/auth/login',
    summary: 'Sign in with email and password; sets the session cookie',
    access: sameOrigin,
    request: loginBody,
    response: api.signedIn,
    errors: ['invalidCredentials', 'rateLimited', 'unavailable'],
  },
  {
    method: 'post',
    path: '/api/auth/logout',
    summary: 'End the session the cookie names and clear the cookie',
    access: sameOrigin,
    request: emptyBody,
    response: api.emptyAnswer,
    errors: ['unavailable'],
  },
  {
    method: 'post',
    path: '/api/auth/emailCode',
    summary: 'Mail a one-time code to the address, if it belongs to a user',
    description:
      'Answers the same for every address. At most one code per address per minute: a second call within the minute is answered 429 rateLimited with Retry-After (and details.retryAfterSeconds), and nothing is mailed; the code already mailed still works.',
    access: sameOrigin,
    request: emailCodeBody,
    response: api.emptyAnswer,
    errors: ['rateLimited', 'unavailable'],
  },
  {
    method: 'post',
    path: '/api/auth/createPasswordWithEmailCode',
    summary: 'Set the first password, or a new one, with a mailed code; ends every session of the user',
    access: sameOrigin,
    request: createPasswordBody,
    response: api.emptyAnswer,
    errors: ['invalidCode', 'passwordRules', 'unavailable'],
  },
  {
    method: 'post',
    path: '/api/auth/getPasswordHelp',
    summary: 'The rules a new password must meet',
    access: sameOrigin,
    request: emptyBody,
    response: api.passwordHelpAnswer,
  },
  {
    method: 'post',
    path: '/api/user/getUserProfile',
    summary: 'Who you are: the signed-in user or the key’s service account',
    access: anyCaller,
    request: emptyBody,
    response: api.userProfile,
  },
  // Conversations (DESIGN §6).
  {
    method: 'post',
    path: '/api/conv/pin',
    summary: 'Pin a conversation of yours (it does not expire) or unpin it',
    access: anyCaller,
    request: pinBody,
    response: api.pinAnswer,
    errors: ['notFound'],
  },
  {
    method: 'post',
    path: '/api/user/listAgents',
    // The developers' /api/dev/listAgents has the default one.
    operationId: 'listPublishedAgents',
    summary: 'The published agents, by name, with their latest version: what a caller can run',
    access: anyCaller,
    request: emptyBody,
    response: z.object({ agents: z.array(z.object({ agentName: z.string(), version: z.number().int(), publishedAt: z.iso.datetime() })) }),
  },
  {
    method: 'post',
    path: '/api/conv/get',
    summary: 'A conversation of yours read back: its turns (query, result, output), oldest first, and the ask it waits at',
    description: 'The last `limit` turns (100 by default, at most 500) that started before `before`. Password answers never appear.',
    access: anyCaller,
    request: getBody,
    response: conversationRead,
    errors: ['notFound'],
  },
  {
    method: 'post',
    path: '/api/conv/list',
    summary: 'Your live conversations, most recently used first',
    access: anyCaller,
    request: listBody,
    response: api.conversationList,
  },
  // Drafts and validation (DESIGN §5).
  {
    method: 'post',
    path: '/api/dev/saveDraft',
    summary: 'Compile and save a draft: a new one, or a new revision of draftid',
    description: 'A draft that does not compile is saved too; compileErrors tells where, in its own source.',
    access: developers,
    request: saveDraftBody,
    response: savedDraft,
    errors: ['draftNotFound'],
  },
  { method: 'post', path: '/api/dev/getDraft', summary: 'A draft, as last saved', access: developers, request: draftBody, response: draftAnswer, errors: ['draftNotFound'] },
  {
    method: 'post',
    path: '/api/dev/publishDraft',
    summary: 'Publish the draft as the next version of its agent',
    description: 'A draft that does not compile is refused (400, with details.compileErrors).',
    access: developers,
    request: draftBody,
    response: publishedDraft,
    errors: ['draftNotFound'],
  },
  { method: 'post', path: '/api/dev/listAgents', summary: 'The published agents and the newest drafts', access: developers, request: listAgentsBody, response: agentList },
  {
    method: 'post',
    path: '/api/dev/validateDraftStream',
    summary: 'Run a draft on its validation query (or inputs.query), with tracing',
    description:
      'Runs like execAgent (conversations, asks, cancel, max runtime). Non-streamed, the answer carries the trace events as `trace`; with `stream: true` they come as `trace` events, and the end event carries the validation fields.',
    access: developers,
    request: validateDraftBody,
    response: validationResponse,
    events: 'whenStreamTrue',
    errors: ['draftNotFound', 'conversationBusy', 'rateLimited'],
  },
  // Reports (DESIGN §7).
  {
    method: 'post',
    path: '/api/admin/usageReport',
    summary: 'Calls made with bearer keys: totals per account, role and UTC day, and the newest rows',
    access: admins,
    request: reportBody,
    response: api.usageReport,
  },
  {
    method: 'post',
    path: '/api/admin/errorReport',
    summary: 'Runs that ended in neither success nor ask, newest first',
    access: admins,
    request: reportBody,
    response: api.errorReport,
  },
  // Agent secrets (DESIGN §13).
  {
    method: 'post',
    path: '/api/admin/setSecret',
    summary: "Sets one secret of an agent name (its runs read it as sys.secrets[key]); the value is sealed and never shown again",
    description:
      'An agent name has two sets of secrets: the production set its published versions read, and the set for drafts (`forDrafts: true`) that only the validation runs of its drafts read. A draft never sees the production set.',
    access: admins,
    request: setSecretBody,
    response: secretNameAnswer,
  },
  {
    method: 'post',
    path: '/api/admin/deleteSecret',
    summary: 'Removes one secret of an agent name, from the production set or (forDrafts: true) the set for drafts',
    access: admins,
    request: deleteSecretBody,
    response: secretNameAnswer,
    errors: ['notFound'],
  },
  {
    method: 'post',
    path: '/api/admin/listSecrets',
    summary: "The names (never the values) of an agent name's production secrets, or (forDrafts: true) of its secrets for drafts",
    access: admins,
    request: listSecretsBody,
    response: z.object({ agentName: z.string(), keys: z.array(z.string()) }),
  },
  {
    method: 'post',
    path: '/api/admin/listAllSecrets',
    summary: 'The names (never the values) of every agent name’s secrets, of both sets, by agent name',
    description: 'What the console’s Secrets page lists. `forDrafts` tells the set: true for the one only drafts read, false for the one published versions read.',
    access: admins,
    request: emptyBody,
    response: z.object({ secrets: z.array(z.object({ agentName: z.string(), forDrafts: z.boolean(), key: z.string(), updatedAt: z.iso.datetime() })) }),
  },
  // Limits per caller (DESIGN §16).
  {
    method: 'post',
    path: '/api/admin/setLimits',
    summary: "Sets an account's limits per caller (runsPerMinute, runsInFlight, weight); those not sent stay as they are",
    description: 'Name the account by name (a service account) or email (a user). A limit set to null goes back to the default from config (RUNS_PER_MINUTE, RUNS_IN_FLIGHT; weight 1). Beyond a limit a call that would start a run is answered 429 rateLimited.',
    access: admins,
    request: setLimitsBody,
    response: limitsAnswer,
    errors: ['notFound'],
  },
  {
    method: 'post',
    path: '/api/admin/getLimits',
    summary: 'The limits per caller that hold for an account, and which are the defaults',
    access: admins,
    request: getLimitsBody,
    response: limitsAnswer,
    errors: ['notFound'],
  },
  {
    method: 'post',
    path: '/api/admin/callerLoad',
    summary: 'The 20 callers with the most runs queued or running plus calls refused by a limit in the last minute',
    access: admins,
    request: emptyBody,
    response: callerLoadAnswer,
  },
  // Schedules (DESIGN §19).
  {
    method: 'post',
    path: '/api/admin/setSchedule',
    summary: "Runs an agent as a service account's background run at each firing of a cron expression; a name in use is replaced",
    description:
      'cron has 5 fields, or 6 with seconds first (as BullMQ job schedulers read it), in tz (an IANA time zone, UTC by default). Each firing is a background run of the account (its limits, its webhook), in a new conversation unless convid names one of the account\'s. A bad cron or tz is 400 naming the field; an unknown account or conversation 404 notFound, an unknown agent 404 agentNotFound; nothing is scheduled then. Setting a name in use replaces that schedule (its next firing is computed again).',
    access: admins,
    request: setScheduleBody,
    response: setScheduleAnswer,
    errors: ['notFound', 'agentNotFound'],
  },
  {
    method: 'post',
    path: '/api/admin/listSchedules',
    summary: 'Every schedule, by name, with its next firing',
    access: admins,
    request: emptyBody,
    response: listSchedulesAnswer,
  },
  {
    method: 'post',
    path: '/api/admin/deleteSchedule',
    summary: 'Deletes a schedule: it fires no more',
    access: admins,
    request: scheduleNameBody,
    response: deleteScheduleAnswer,
    errors: ['notFound'],
  },
  // Accounts (DESIGN §3, §18): what the command line's users:create and service-accounts:* do, for the console.
  {
    method: 'post',
    path: '/api/admin/listAccounts',
    summary: 'Every service account (by name) and every user (by email): never a key, its hash or a password',
    access: admins,
    request: emptyBody,
    response: accountListAnswer,
  },
  {
    method: 'post',
    path: '/api/admin/createServiceAccount',
    summary: 'Creates a service account and answers its bearer key, shown this once',
    access: admins,
    request: createServiceAccountBody,
    response: serviceAccountKeyAnswer,
  },
  {
    method: 'post',
    path: '/api/admin/rotateKey',
    summary: 'Gives a service account a new key, answered this once; the old key stops working on every web process at once',
    access: admins,
    request: serviceAccountBody,
    response: serviceAccountKeyAnswer,
    errors: ['notFound'],
  },
  {
    method: 'post',
    path: '/api/admin/deleteServiceAccount',
    summary: 'Deletes a service account; its key stops working on every web process at once',
    description: 'Its runs, usage and webhook deliveries stay in the reports and logs, without its name.',
    access: admins,
    request: serviceAccountBody,
    response: deletedServiceAccountAnswer,
    errors: ['notFound'],
  },
  {
    method: 'post',
    path: '/api/admin/createUser',
    summary: 'Creates a user without a password: they set one by email code',
    access: admins,
    request: createUserBody,
    response: createdUserAnswer,
  },
  {
    method: 'post',
    path: '/api/admin/setRole',
    summary: 'Gives a service account (by name) or a user (by email) another role, from its next call',
    access: admins,
    request: setRoleBody,
    response: setRoleAnswer,
    errors: ['notFound'],
  },
  // Webhooks (DESIGN §14, §18): endpoints are set with the command line, which shows the signing secret once.
  {
    method: 'post',
    path: '/api/admin/listWebhooks',
    summary: 'Each service account’s webhook endpoint (never its signing secret)',
    access: admins,
    request: emptyBody,
    response: webhookListAnswer,
  },
  {
    method: 'post',
    path: '/api/admin/listWebhookDeliveries',
    summary: 'The webhook delivery log, newest first: each delivery with its attempts, their answers and the next retry',
    description: 'Pages by keyset: pass the answer’s nextCursor as cursor for the next, older page. Filter by service account (name) and status.',
    access: admins,
    request: listDeliveriesBody,
    response: deliveryPageAnswer,
    errors: ['notFound'],
  },
  {
    method: 'post',
    path: '/api/admin/redeliverWebhook',
    summary: 'Delivers a webhook again: a delivered or failed one gets a new round of retries; a pending one waiting for its retry goes now',
    description: 'Through the same queue and worker as every delivery, with the same webhook-id, so a receiver can tell a repeat. 400 when the account has no endpoint any more.',
    access: admins,
    request: redeliverBody,
    response: redeliverAnswer,
    errors: ['notFound'],
  },
  // The console (DESIGN §18).
  {
    method: 'post',
    path: '/api/admin/listRuns',
    summary: 'Ended runs, newest first, filtered by agent, account, result code and start time, a page at a time',
    description:
      'Pages by keyset: pass the answer\'s nextCursor as cursor for the next, older page; a run is on exactly one page however many runs end meanwhile (new ones appear on a first page). Runs still queued or running are not listed (their record is written when they end).',
    access: admins,
    request: listRunsBody,
    response: runListAnswer,
  },
  {
    method: 'post',
    path: '/api/admin/getRun',
    operationId: 'adminGetRun',
    summary: "Any caller's run, queued, running or ended: its record, output, error, trace id and timeline",
    description:
      'The timeline lists what the run did, in order: each sys.fetch (method, URL without its query, status or error, time to the response headers), each ask and each log line, secret values and password answers masked. It is kept with the execution record, so it is empty while the run is queued or running.',
    access: admins,
    request: adminRunBody,
    response: adminRunAnswer,
    errors: ['notFound'],
  },
  {
    method: 'post',
    path: '/api/admin/cancelRun',
    operationId: 'adminCancelRun',
    summary: "Stops any caller's queued or running run; it ends stopped (cancelled false when it had ended already)",
    access: admins,
    request: adminRunBody,
    response: api.cancelAnswer,
    errors: ['notFound'],
  },
  {
    method: 'post',
    path: '/api/admin/getQueues',
    summary: "Each shard's run queue (waiting, running, delayed, paused) and each live worker (runs in flight, memory, whether it takes new runs)",
    access: admins,
    request: emptyBody,
    response: queuesAnswer,
  },
  {
    method: 'post',
    path: '/api/admin/pauseQueues',
    summary: 'Pauses intake: no queued run starts (on any shard, in any worker) until resumed; running runs go on, calls are still queued',
    description: 'Web processes answering short runs themselves queue them instead while intake is paused. Answers as getQueues.',
    access: admins,
    request: emptyBody,
    response: queuesAnswer,
  },
  {
    method: 'post',
    path: '/api/admin/resumeQueues',
    summary: 'Resumes intake: queued runs start again, in their order',
    access: admins,
    request: emptyBody,
    response: queuesAnswer,
  },
  // Operations (README: Operations).
  { method: 'get', path: '/healthz', summary: 'Liveness: the process answers', access: anyone, response: api.liveness },
  {
    method: 'get',
    path: '/readyz',
    summary: 'Readiness: PostgreSQL and Redis reachable (200), or not (503)',
    access: anyone,
    response: api.readiness,
    responseAlsoWith: [503],
  },
  {
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics of this web process and of the cluster’s runs',
    access: anyone,
    otherContent: { mediaType: 'text/plain; version=0.0.4', description: 'Prometheus text exposition format.' },
  },
  {
    method: 'get',
    path: '/api/openapi.json',
    operationId: 'getOpenApiDocument',
    summary: 'This document',
    access: anyone,
    otherContent: { mediaType: 'application/json', description: 'An OpenAPI 3.1 document.' },
  },
  {
    method: 'get',
    path: '/admin/queues',
    operationId: 'queueDashboard',
    summary: 'The queue dashboard (read-only), for admins',
    description: 'An HTML page for a browser, with the files and the JSON it loads below /admin/queues/. Only GET and HEAD are answered.',
    access: admins,
    otherContent: { mediaType: 'text/html', description: 'The dashboard page.' },
    errors: ['notFound', 'unavailable'],
  },
];
