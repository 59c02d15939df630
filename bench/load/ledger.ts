import type { ResultCode } from '../../shared/api.js';
import type { LoadAgentName } from './agents.js';

/** What the load test's calls imply for each conversation: the state the database must hold at the end. */

export interface ExpectedConversation {
  /** Per agent: how many of its runs were kept (success or ask, counted once per pause). */
  counts: Partial<Record<LoadAgentName, number>>;
  /** sys.conv.queries: the query of every kept run, in order. */
  queries: string[];
  /** The prompt history: one entry per kept run (a resumed ask adds one with query null). */
  history: { agentName: LoadAgentName; query: string | null; resultCode: ResultCode }[];
  /** Execution records: one per call that reached a worker. */
  executions: number;
  /** Whether the conversation ends paused on an ask. */
  paused: boolean;
}

export interface Ledger {
  conversations: Map<string, ExpectedConversation>;
  /** A kept run of `agentName` on `convid`: success, or the ask of a pause. */
  kept(convid: string, agentName: LoadAgentName, query: string, resultCode: 'success' | 'ask'): void;
  /** The success of a resumed ask: a history entry without a query, nothing else changes. */
  resumed(convid: string, agentName: LoadAgentName): void;
  /** A call that ran but kept nothing (stopped). */
  discarded(convid: string): void;
  /** What `convid` has so far (for calls that expect n and h). */
  current(convid: string): ExpectedConversation;
  /**
   * A call on `convid` got no answer (its connection broke): whether it ran is unknown, so the
   * conversation cannot be checked. The failure itself is counted where it happened.
   */
  uncertain(convid: string): void;
  isUncertain(convid: string): boolean;
}

export function createLedger(): Ledger {
  const conversations = new Map<string, ExpectedConversation>();
  const uncertain = new Set<string>();
  const current = (convid: string) => {
    let conversation = conversations.get(convid);
    if (!conversation) {
      conversation = { counts: {}, queries: [], history: [], executions: 0, paused: false };
      conversations.set(convid, conversation);
    }
    return conversation;
  };
  return {
    conversations,
    current,
    kept(convid, agentName, query, resultCode) {
      const c = current(convid);
      c.counts[agentName] = (c.counts[agentName] ?? 0) + 1;
      c.queries.push(query);
      c.history.push({ agentName, query, resultCode });
      c.executions += 1;
      c.paused = resultCode === 'ask';
    },
    resumed(convid, agentName) {
      const c = current(convid);
      c.history.push({ agentName, query: null, resultCode: 'success' });
      c.executions += 1;
      c.paused = false;
    },
    discarded(convid) {
      current(convid).executions += 1;
    },
    uncertain: (convid) => void uncertain.add(convid),
    isUncertain: (convid) => uncertain.has(convid),
  };
}
