import type { AskInput, Answers, HistoryEntry, JsonObject, OutputPart, PrincipalKind, Role } from '../../shared/api.js';

/** What sys.fetch returned, as recorded for replay. */
export interface FetchResult {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/**
 * One non-deterministic call made by a run, in call order. On resume the journal is replayed:
 * each call returns its recorded result instead of running again.
 */
export type JournalEntry =
  | { op: 'now'; value: number }
  | { op: 'sleep'; ms: number }
  | { op: 'fetch'; method: string; url: string; result?: FetchResult; error?: string }
  | { op: 'ask'; ask: AskInput; answers?: Answers };

export type FailureCode = 'failCommand' | 'callFailed' | 'errorInAgent' | 'unexpected' | 'timedOut' | 'stopped' | 'mustLogin';

export interface SandboxError {
  message: string;
  line?: number;
  column?: number;
}

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
  /** Aborting it ends the run at once: `mustLogin` when its reason is run-stop's sessionEnded, else `stopped`. */
  signal?: AbortSignal;
  /** AGENT_HTTP_ALLOW entries. */
  httpAllow: string[];
  /** Called for each part made after replay, as it is made (streaming). */
  onPart?: (part: OutputPart) => void;
  /** Called when sys.write appends to the current text part. */
  onDelta?: (text: string) => void;
  onLog?: (line: string) => void;
}

export type SandboxOutcome =
  | { resultCode: 'success'; output: OutputPart[]; vars: JsonObject; conv: JsonObject }
  | {
      resultCode: 'ask';
      output: OutputPart[];
      vars: JsonObject;
      conv: JsonObject;
      askInput: AskInput;
      /** The journal to store with the pause: every entry up to and including this ask (no answers). */
      journal: JournalEntry[];
    }
  | { resultCode: FailureCode; output: OutputPart[]; error: SandboxError };
