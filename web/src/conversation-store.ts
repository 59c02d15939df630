import { createContext } from 'preact';
import type { ApiErrorBody } from './api/http';
import type { Answers, AskInput, ConversationSummary, OutputPart, RunEndData } from './api/types';

/** One call in a conversation as the page shows it: what was sent, what came back, how it ended. */
export interface Turn {
  id: number;
  /** The run, once its start event (or the transcript read back) named it. */
  runId?: string;
  /** The agent the call ran. */
  agentName: string;
  /** A search (the query), answers to an ask (a summary), or the last call replayed when a conversation was opened. */
  kind: 'query' | 'answers' | 'replayed';
  /** The query or the answers' summary; null for answers this page did not send (the server keeps none). */
  text: string | null;
  parts: OutputPart[];
  end?: RunEndData;
  error?: ApiErrorBody;
}

/** An ask waiting for answers: the agent that asked, its question, and what was wrong with the last answers. */
export interface PendingAsk {
  agentName: string;
  askInput: AskInput;
  fieldErrors?: Record<string, string>;
  /** The answers the user sent and the agent refused: the form shows them again, not the defaults. */
  refusedAnswers?: Answers;
}

export interface ConversationView {
  turns: Turn[];
  ask?: PendingAsk;
  /** The answers of the call going on, while it goes on. */
  sentAnswers?: Answers;
  summary?: ConversationSummary;
}

/**
 * What this page has shown of each conversation, by convid, while it stays open, so going back to one
 * shows it at once (one this page has not seen is read back with /api/conv/get). Cleared on sign-out.
 */
export interface ConversationStore {
  get(convid: string): ConversationView | undefined;
  set(convid: string, view: ConversationView): void;
  clear(): void;
}

export function createConversationStore(): ConversationStore {
  const views = new Map<string, ConversationView>();
  return {
    get: (convid) => views.get(convid),
    set: (convid, view) => void views.set(convid, view),
    clear: () => views.clear(),
  };
}

export const ConversationStoreContext = createContext<ConversationStore>(createConversationStore());

/** The turns with `change` applied to the last one. */
export function updateLastTurn(turns: Turn[], change: (turn: Turn) => Turn): Turn[] {
  const last = turns[turns.length - 1];
  return last ? [...turns.slice(0, -1), change(last)] : turns;
}

/** sys.write's text: appended to the last part when it is text, else a new text part (as the worker does). */
export function appendDelta(parts: OutputPart[], text: string): OutputPart[] {
  const last = parts[parts.length - 1];
  if (last?.type === 'text') return [...parts.slice(0, -1), { type: 'text', text: last.text + text }];
  return [...parts, { type: 'text', text }];
}
