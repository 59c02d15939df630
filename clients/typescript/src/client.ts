import { AdminApi } from './admin.js';
import { postForResponse, postJson, type Transport } from './http.js';
import { withFinalResponse, type RunStream } from './run-response.js';
import { streamRunEvents } from './run-stream.js';
import type { AdminRun, Answers, ConversationList, ConversationRead, ExecutionResponse, JsonObject, PinnedConversation, QueuesState, RunEvent, RunInfo, RunListFilter, RunListPage, Schedule, ScheduleRequest, SubmittedRun } from './types.js';

export interface AgentexecClientOptions {
  /** The service's origin, e.g. https://agentexec.example.com; "" in a browser page the service serves. */
  baseUrl: string;
  /** A service account's key (`ak_…`). Without one, calls carry the browser's session cookie. */
  apiKey?: string;
  /** Retries of a call that got no answer, or a 502/503/504, with backoff (default 4). */
  maxRetries?: number;
  /** Headers added to every call. */
  headers?: Record<string, string>;
  /** Default: the platform's fetch. */
  fetch?: typeof fetch;
}

export interface CallOptions {
  /** Continue this conversation (yours); a new one starts without it. */
  convid?: string;
  /** Aborting stops the run on the server (a cancel) and rejects the call with the signal's reason. */
  signal?: AbortSignal;
  /** Made once per call when not given; every retry of the call sends the same one. */
  idempotencyKey?: string;
  /**
   * With `convid`, when the conversation has a run queued or running: wait for it (`enqueue`, the
   * default), fail with ConversationBusy (`reject`), or stop it and run next (`interrupt`).
   */
  ifBusy?: 'enqueue' | 'reject' | 'interrupt';
}

export type CancelTarget = { convid: string } | { runId: string } | { requestId: string };

/**
 * The agentexec API (DESIGN §15). Every call that starts a run carries an Idempotency-Key made once
 * per logical call, so the retries this client makes after a lost connection never start a second
 * run; streams re-attach by themselves. Errors are AgentexecError subclasses by code.
 */
export class AgentexecClient {
  readonly #transport: Transport;
  /** The console's admin endpoints: accounts, limits, secrets, webhooks, reports (admins only). */
  readonly admin: AdminApi;

  constructor(options: AgentexecClientOptions) {
    this.#transport = {
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      apiKey: options.apiKey,
      fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
      headers: options.headers ?? {},
      maxRetries: options.maxRetries ?? 4,
    };
    this.admin = new AdminApi(this.#transport);
  }

  /** Runs an agent and answers how the run ended (`resultCode`, `output`, `askInput` when it asks). */
  run(agentName: string, inputs: JsonObject = {}, options: CallOptions = {}): Promise<ExecutionResponse> {
    const key = options.idempotencyKey ?? newKey();
    return this.#cancelOnAbort(key, options.signal, () =>
      postJson<ExecutionResponse>(this.#transport, '/api/exec/execAgent', execBody(agentName, inputs, options), {
        headers: { 'idempotency-key': key },
        signal: options.signal,
        retry: true,
      }),
    );
  }

  /**
   * Answers the ask a conversation is paused at, as `run` does: the agent that asked, the answers by
   * input name, and the conversation in `{convid}` (the order of `run`).
   */
  answer(agentName: string, answers: Answers, options: CallOptions & { convid: string }): Promise<ExecutionResponse>;
  /** @deprecated The order before 0.2: `answer(convid, agentName, answers)`. Use `answer(agentName, answers, {convid})`. */
  answer(convid: string, agentName: string, answers: Answers, options?: Omit<CallOptions, 'convid'>): Promise<ExecutionResponse>;
  answer(...args: [string, Answers, CallOptions & { convid: string }] | [string, string, Answers, Omit<CallOptions, 'convid'>?]): Promise<ExecutionResponse> {
    // The old order has the agent's name, a string, where the new one has the answers, an object.
    if (typeof args[1] === 'string') {
      const [convid, agentName, answers, options = {}] = args as [string, string, Answers, Omit<CallOptions, 'convid'>?];
      return this.run(agentName, answers, { ...options, convid });
    }
    const [agentName, answers, options] = args as [string, Answers, CallOptions & { convid: string }];
    if (typeof options?.convid !== 'string') throw new TypeError('answer(agentName, answers, {convid}): the convid of the conversation that asked is missing');
    return this.run(agentName, answers, options);
  }

  /**
   * Runs an agent and yields its events as they come: `start`, `part`, `delta`, `trace`, then `end`
   * (the execution response without output). Re-attaches after a dropped connection; never yields an
   * event twice. Leaving the loop early only disconnects (the run goes on); abort `signal` to stop it.
   * `finalResponse()` on the stream resolves with the execution response (output included) that
   * `run` would have answered, reading the events the loop has not.
   */
  stream(agentName: string, inputs: JsonObject = {}, options: CallOptions = {}): RunStream {
    const key = options.idempotencyKey ?? newKey();
    const body = { ...execBody(agentName, inputs, options), stream: true };
    return withFinalResponse(this.#streamCancellingOnAbort(key, options.signal, '/api/exec/execAgent', body));
  }

  /**
   * Streams another endpoint that answers run events (a draft's validation). Without `idempotencyKey`
   * a dropped stream is not re-attached (the endpoint must be able to join a run by key for that).
   */
  streamEndpoint(path: string, body: Record<string, unknown>, options: { signal?: AbortSignal; idempotencyKey?: string } = {}): RunStream {
    return withFinalResponse(streamRunEvents(this.#transport, { path, body: { ...body, stream: true }, idempotencyKey: options.idempotencyKey, signal: options.signal }));
  }

  /**
   * A conversation of yours read back (DESIGN §14): its turns, oldest first (the last `limit`, 100 by
   * default, at most 500, that started before `before`), and the ask it waits at. NotFoundError for
   * another caller's, an unknown or an expired conversation.
   */
  getConversation(convid: string, page: { limit?: number; before?: string } = {}): Promise<ConversationRead> {
    return postJson<ConversationRead>(this.#transport, '/api/conv/get', { convid, ...page }, { retry: true });
  }

  /** Your live conversations, most recently used first: a page of `limit` (50 by default, at most 200) used before `before` (the last page's oldest `lastUsedAt`). */
  listConversations(page: { limit?: number; before?: string } = {}): Promise<ConversationList> {
    return postJson<ConversationList>(this.#transport, '/api/conv/list', page, { retry: true });
  }

  /** Pins a conversation of yours (it no longer expires), or unpins it with `pinned: false`. NotFoundError when it is not yours or has expired. */
  pinConversation(convid: string, pinned = true): Promise<PinnedConversation> {
    return postJson<PinnedConversation>(this.#transport, '/api/conv/pin', { convid, pinned }, { retry: true });
  }

  /** Starts a background run (DESIGN §14): answers as soon as it is queued. */
  submit(agentName: string, inputs: JsonObject = {}, options: Omit<CallOptions, 'signal'> = {}): Promise<SubmittedRun> {
    const key = options.idempotencyKey ?? newKey();
    return postJson<SubmittedRun>(this.#transport, '/api/exec/submit', execBody(agentName, inputs, options), { headers: { 'idempotency-key': key }, retry: true });
  }

  /** A run's status, and its execution response once it has ended. */
  getRun(runId: string): Promise<RunInfo> {
    return postJson<RunInfo>(this.#transport, '/api/exec/getRun', { runId }, { retry: true });
  }

  /** Waits until the run has ended, or `timeoutMs` (≤ 60,000; default 30,000) has passed: answers its status either way. */
  wait(runId: string, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<RunInfo> {
    const body = options.timeoutMs === undefined ? { runId } : { runId, timeoutMs: options.timeoutMs };
    return postJson<RunInfo>(this.#transport, '/api/exec/wait', body, { signal: options.signal, retry: true });
  }

  /** Stops a run: by conversation, run id, or the request id / Idempotency-Key of its call. Answers whether one was stopped. */
  async cancel(target: CancelTarget): Promise<boolean> {
    const { cancelled } = await postJson<{ cancelled: boolean }>(this.#transport, '/api/exec/cancel', target, { retry: true });
    return cancelled;
  }

  /**
   * Ended runs of every caller, newest first (admins only; ForbiddenError otherwise): a page of `limit`
   * (50 by default, at most 100) matching `filter`, from `cursor` (the `nextCursor` of the page before).
   */
  listRuns(filter: RunListFilter = {}, page: { limit?: number; cursor?: string } = {}): Promise<RunListPage> {
    return postJson<RunListPage>(this.#transport, '/api/admin/listRuns', { ...filter, ...page }, { retry: true });
  }

  /**
   * Sets a schedule (admins; DESIGN §19): each firing of its cron is a background run of its account.
   * A name in use is replaced (`replaced: true`). Bad cron or tz: InvalidRequestError naming the field.
   */
  setSchedule(schedule: ScheduleRequest): Promise<{ schedule: Schedule; replaced: boolean }> {
    return postJson<{ schedule: Schedule; replaced: boolean }>(this.#transport, '/api/admin/setSchedule', schedule, { retry: true });
  }

  /** Every schedule, by name, with its next firing (admins). */
  async listSchedules(): Promise<Schedule[]> {
    const { schedules } = await postJson<{ schedules: Schedule[] }>(this.#transport, '/api/admin/listSchedules', {}, { retry: true });
    return schedules;
  }

  /** Deletes a schedule (admins); an unknown name is NotFoundError. Not retried: a retry of a delete that went through would be NotFoundError. */
  async deleteSchedule(name: string): Promise<void> {
    await postJson(this.#transport, '/api/admin/deleteSchedule', { name });
  }

  /** Any caller's run (admins only): its record, output, error, trace id and timeline; NotFoundError for an unknown id. */
  adminGetRun(runId: string): Promise<AdminRun> {
    return postJson<AdminRun>(this.#transport, '/api/admin/getRun', { runId }, { retry: true });
  }

  /** Stops any caller's queued or running run (admins only); false when it had ended already. */
  async adminCancelRun(runId: string): Promise<boolean> {
    const { cancelled } = await postJson<{ cancelled: boolean }>(this.#transport, '/api/admin/cancelRun', { runId }, { retry: true });
    return cancelled;
  }

  /** Each shard's run queue and each live worker (admins only). */
  getQueues(): Promise<QueuesState> {
    return postJson<QueuesState>(this.#transport, '/api/admin/getQueues', {}, { retry: true });
  }

  /** Pauses intake (admins only): no queued run starts until `resumeQueues`; running runs go on. */
  pauseQueues(): Promise<QueuesState> {
    return postJson<QueuesState>(this.#transport, '/api/admin/pauseQueues', {}, { retry: true });
  }

  /** Resumes intake (admins only). */
  resumeQueues(): Promise<QueuesState> {
    return postJson<QueuesState>(this.#transport, '/api/admin/resumeQueues', {}, { retry: true });
  }

  /** POSTs to any endpoint of the API and answers its JSON (errors as AgentexecError). */
  post<T = unknown>(path: string, body: unknown = {}, options: { signal?: AbortSignal; headers?: Record<string, string> } = {}): Promise<T> {
    return postJson<T>(this.#transport, path, body, options);
  }

  /** The raw response of a POST that succeeded (errors as AgentexecError), for answers that are not JSON. */
  postForResponse(path: string, body: unknown = {}, options: { signal?: AbortSignal; headers?: Record<string, string> } = {}): Promise<Response> {
    return postForResponse(this.#transport, path, body, options);
  }

  async #cancelOnAbort<T>(key: string, signal: AbortSignal | undefined, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (signal?.aborted) await this.#cancelQuietly(key);
      throw err;
    }
  }

  async *#streamCancellingOnAbort(key: string, signal: AbortSignal | undefined, path: string, body: Record<string, unknown>): AsyncGenerator<RunEvent, void, undefined> {
    try {
      yield* streamRunEvents(this.#transport, { path, body, idempotencyKey: key, signal });
    } catch (err) {
      if (signal?.aborted) await this.#cancelQuietly(key);
      throw err;
    }
  }

  /** A cancel sent because the caller aborted: its failure must not hide the abort. */
  async #cancelQuietly(key: string): Promise<void> {
    await this.cancel({ requestId: key }).catch(() => undefined);
  }
}

function execBody(agentName: string, inputs: JsonObject, options: CallOptions): Record<string, unknown> {
  return { agentName, inputs, ...(options.convid ? { convid: options.convid } : {}), ...(options.ifBusy ? { ifBusy: options.ifBusy } : {}) };
}

function newKey(): string {
  return crypto.randomUUID();
}
