import { postForResponse, postJson, type Transport } from './http.js';
import { streamRunEvents } from './run-stream.js';
import type { Answers, ExecutionResponse, JsonObject, RunEvent, RunInfo, SubmittedRun } from './types.js';

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

  constructor(options: AgentexecClientOptions) {
    this.#transport = {
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      apiKey: options.apiKey,
      fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
      headers: options.headers ?? {},
      maxRetries: options.maxRetries ?? 4,
    };
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

  /** Answers the ask a conversation is paused at (the same agent), as `run` does. */
  answer(convid: string, agentName: string, answers: Answers, options: Omit<CallOptions, 'convid'> = {}): Promise<ExecutionResponse> {
    return this.run(agentName, answers, { ...options, convid });
  }

  /**
   * Runs an agent and yields its events as they come: `start`, `part`, `delta`, `trace`, then `end`
   * (the execution response without output). Re-attaches after a dropped connection; never yields an
   * event twice. Leaving the loop early only disconnects (the run goes on); abort `signal` to stop it.
   */
  stream(agentName: string, inputs: JsonObject = {}, options: CallOptions = {}): AsyncGenerator<RunEvent, void, undefined> {
    const key = options.idempotencyKey ?? newKey();
    const body = { ...execBody(agentName, inputs, options), stream: true };
    return this.#streamCancellingOnAbort(key, options.signal, '/api/exec/execAgent', body);
  }

  /**
   * Streams another endpoint that answers run events (a draft's validation). Without `idempotencyKey`
   * a dropped stream is not re-attached (the endpoint must be able to join a run by key for that).
   */
  streamEndpoint(path: string, body: Record<string, unknown>, options: { signal?: AbortSignal; idempotencyKey?: string } = {}): AsyncGenerator<RunEvent, void, undefined> {
    return streamRunEvents(this.#transport, { path, body: { ...body, stream: true }, idempotencyKey: options.idempotencyKey, signal: options.signal });
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
