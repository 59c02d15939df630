import type { TracedCall } from '../../shared/trace.js';
import type { TimelineEntry } from '../../shared/run-timeline.js';
import type { FetchResult } from '../outbound-http/http-fetch.js';
import type { AskInput, Answers, ExecutionError, HistoryEntry, JsonObject, OutputPart, PrincipalKind, Role, ResultCode } from '../../shared/api.js';

/**
 * One non-deterministic call made by a run, in call order. On resume the journal is replayed:
 * each call returns its recorded result instead of running again.
 */
export type JournalEntry =
  | { op: 'now'; value: number }
  | { op: 'sleep'; ms: number }
  | {
      op: 'fetch';
      method: string;
      url: string;
      /** The response; a streamed one's `text` is "" and its body is in `chunks`. */
      result?: FetchResult;
      /** The request failed (no response). */
      error?: string;
      /** `stream: true`: the body as the agent read it, chunk by chunk, and how it ended (if it did). */
      stream?: { chunks: string[]; end?: 'done' | { error: string } };
    }
  | { op: 'ask'; ask: AskInput; answers?: Answers }
  | {
      op: 'call';
      agentName: string;
      /** The conversation the agent named (null: a new one). */
      convid: string | null;
      /** The child run, fixed before it started (AgentCalls.childOf), and its conversation. */
      runId: string;
      childConvid: string;
      /** How the child ended; none yet when the run paused while the child still ran (its replay then waits for that child). */
      result?: CallResult;
    };

/** Why sys.call ran no child (or the child was refused before its agent ran): no record of a run exists then. */
export type CallRefusal = 'agentNotFound' | 'rateLimited' | 'conversationBusy' | 'unavailable';

/** What sys.call answers (DESIGN §19): how the child run ended, as its execution response says, with its run id. */
export interface CallResult {
  resultCode: ResultCode | CallRefusal;
  /** The child's conversation; null when no run was made (agentNotFound, rateLimited). */
  convid: string | null;
  runId: string | null;
  output: OutputPart[];
  askInput?: AskInput;
  error?: ExecutionError;
}

/** A child run to start, or to join when it started before (the same ids). */
export interface ChildCall {
  runId: string;
  convid: string;
  /** True when the child makes its conversation (no convid was named). */
  newConversation: boolean;
  agentName: string;
  inputs: JsonObject;
  /** Named by a live call of this run (not a replay): no earlier run can have started it. */
  live: boolean;
}

/** How a run's sys.call reaches the run path (workers/runs/agent-calls.ts); absent where no child can run. */
export interface AgentCalls {
  /** How deep the run nests below its caller's run (the caller's own run is 0). */
  depth: number;
  /**
   * The child of the run's journaled call number `callNumber`, in the conversation named (or a new one):
   * the same ids in every process and every try of the same run.
   */
  childOf(callNumber: number, convid: string | null): { runId: string; convid: string };
  /**
   * Starts the child, or joins it when it started before, and resolves with how it ended. `signal`
   * aborts with `'detach'` (the run paused: stop waiting, the child goes on) or anything else (the run
   * ended: the child is stopped too).
   */
  run(child: ChildCall, signal: AbortSignal): Promise<CallResult>;
}


export interface SandboxError {
  message: string;
  line?: number;
  column?: number;
  /** The stack the agent's error carried, in the compiled code's positions (draft validation shows it). */
  stack?: string;
}

/** Where in the compiled code something happened (1-based), when the sandbox could place it. */
export interface CodeSite {
  line: number;
  column: number;
}

/**
 * What a traced run reports (draft validation), in the order it happens and with the compiled code's
 * positions: sys calls and what they returned, changes to sys.vars / sys.conv, log lines. Nothing is
 * reported while a resumed run replays up to its ask.
 */
export type SandboxTrace = { site: CodeSite | null } & (
  | { kind: 'call'; name: TracedCall; args: unknown }
  /** `call`: what onTrace returned for the call event; null when the call was made while replaying. */
  | { kind: 'result'; name: TracedCall; call: number | null; value?: unknown; error?: string }
  | { kind: 'var'; scope: 'vars' | 'conv'; path: string[]; op: 'set' | 'delete'; value?: unknown }
  | { kind: 'log'; text: string }
);

export interface SandboxRun {
  /** Output of compileAgent. */
  code: string;
  agentName: string;
  convid: string;
  inputs: JsonObject;
  caller: { kind: PrincipalKind; id: string; role: Role };
  history: HistoryEntry[];
  /** Agent variables and conversation variables at the start of the run. */
  vars: JsonObject;
  conv: JsonObject;
  /** Seeds Math.random so a replay draws the same numbers. */
  randomSeed: number;
  /**
   * Calls to replay, in order. Empty for a fresh run. When resuming, its last entry is the ask being
   * answered, with `answers` filled in. Output made while replaying is not emitted again.
   */
  journal: JournalEntry[];
  memoryMb: number;
  maxRuntimeMs: number;
  /** CPU time the run may use (AGENT_CPU_MS; run-watch.ts defaultCpuMs when not given). */
  cpuMs?: number;
  /** Never take or give back a warm isolate (draft runs: a draft shares no warm state with a published agent). */
  fresh?: boolean;
  /**
   * The run's async sys calls (sleep, fetch, ask, a stream's reads) wait for it before they act: a run
   * started before it is known to be the right one reaches nothing outside the sandbox until then. Stop
   * the run through `signal` before it settles if it is not. Never rejects. Awaited only when a call
   * needs it, so a lazy one (a thenable) starts its confirmation then.
   */
  hold?: PromiseLike<unknown>;
  /**
   * Told each time the run makes an async sys call (it waits on the host from then), and when it joins
   * a context another run is loading (it waits on that load): workers/runs/start-gate.ts.
   */
  onWait?: () => void;
  /** Aborting it ends the run at once: `mustLogin` when its reason is sandbox-endings.ts's sessionEnded, else `stopped`. */
  signal?: AbortSignal;
  /** AGENT_HTTP_ALLOW entries. */
  httpAllow: string[];
  /** sys.call's way to the run path; without it sys.call throws. */
  agentCalls?: AgentCalls;
  /**
   * The agent name's secrets (DESIGN §13), its `sys.secrets`. What the run records of its requests
   * (the journal's URLs and errors) and the error it ends with have their values masked
   * (shared/agent-secrets.ts `secretMasker`).
   */
  secrets?: Readonly<Record<string, string>>;
  /** Called for each part made after replay, as it is made (streaming). */
  onPart?: (part: OutputPart) => void;
  /** Called when sys.write appends to the current text part. */
  onDelta?: (text: string) => void;
  /** Told each live fetch (once answered or failed), ask and log line, for the run's timeline (shared/run-timeline.ts). */
  onTimeline?: (entry: TimelineEntry) => void;
  /**
   * Turns tracing on (slower: every sys call records where it was made). Returns the event's number,
   * which a later `result` event refers to; undefined when the event was not kept.
   */
  onTrace?: (event: SandboxTrace) => number | undefined;
}

/** Why an inline run was not run to its end: its isolate was busy or it needed a context it may not load now ('busy'), or it computed past its synchronous entry ('long'). */
export type InlineDecline = 'busy' | 'long';

/**
 * An inline run the sandbox did not run to its end (run-sandbox.ts runSandboxInline), and why: nothing
 * of it was sent. Not an ending: its call runs elsewhere.
 */
export interface InlineDeclined {
  declined: InlineDecline;
}

/** What the sandbox asks of an inline run's caller (run-sandbox.ts runSandboxInline). */
export interface InlineEntry {
  /** With no warm context for the run: whether one may be loaded for it now. */
  mayLoad(): boolean;
  /**
   * The run was over within its entry, into a context that had run before: the isolate's CPU time
   * the entry took (ms). A context's first entry compiles the agent's code and is not counted.
   */
  entered(cpuMs: number): void;
  /**
   * Whether the run is still to be tried here: false once another run of its agent showed meanwhile
   * that they are not short (it waited on the host), so a burst of them stops waiting for a context.
   */
  stillTried?(): boolean;
}
