import { useContext, useEffect, useRef, useState } from 'preact/hooks';
import { postJson, type ApiErrorBody } from '../api/http';
import { startStreamedRun, type RunningCall } from '../api/run-stream';
import type { Answers, ConversationRead, RunEndData } from '../api/types';
import { appendDelta, ConversationStoreContext, updateLastTurn, type ConversationView, type Turn } from '../conversation-store';
import { navigate } from '../router';
import { recallAnswers, rememberAnswers } from '../sent-answers';

let nextTurnId = 1;

export interface Conversation extends ConversationView {
  convid: string | undefined;
  /**
   * The agent the conversation is with: the one waiting for answers, else the one of its last call;
   * undefined for a new conversation (or one not read back yet).
   */
  agentName: string | undefined;
  running: boolean;
  /** True between the click on Stop and the end of the run. */
  stopping: boolean;
  /** Sends a query to `agentName` (the default agent when not given). */
  search(query: string, agentName?: string): void;
  answer(answers: Answers, summary: string): void;
  stop(): void;
  startNew(): void;
}

/**
 * One conversation of the search page: runs the default agent with the user's query (streamed),
 * answers its asks, stops a run. `routeConvid` is the conversation the address names (/c/<convid>).
 */
export function useConversation(defaultAgent: string, routeConvid: string | undefined): Conversation {
  const store = useContext(ConversationStoreContext);
  const [convid, setConvid] = useState(routeConvid);
  const [view, setView] = useState<ConversationView>(() => (routeConvid && store.get(routeConvid)) || { turns: [] });
  const [running, setRunning] = useState<RunningCall | undefined>();
  const [stopping, setStopping] = useState(false);
  const convidRef = useRef(convid);
  convidRef.current = convid;

  // The address names a conversation (on opening, a link, back/forward, another device): show it, read
  // back from the server when this page has not seen it yet.
  useEffect(() => {
    if (running) return;
    const stored = routeConvid ? store.get(routeConvid) : undefined;
    if (routeConvid !== convidRef.current) {
      setConvid(routeConvid);
      setView(stored ?? { turns: [] });
    }
    if (routeConvid && !stored?.turns.length) void loadTranscript(routeConvid, setView);
  }, [routeConvid]);

  useEffect(() => {
    if (convid) store.set(convid, view);
  }, [convid, view]);

  const run = (agentName: string, inputs: Record<string, unknown>, turn: Pick<Turn, 'kind' | 'text'>) => {
    const sentAnswers = turn.kind === 'answers' ? (inputs as Answers) : undefined;
    setView((v) => ({ ...v, ask: undefined, sentAnswers, turns: [...v.turns, { id: nextTurnId++, agentName, ...turn, parts: [] }] }));
    const call = startStreamedRun('/api/exec/execAgent', { agentName, inputs, ...(convid ? { convid } : {}) }, {
      onStart: (data) => {
        setConvid(data.convid);
        navigate(`/c/${data.convid}`, { replace: true });
        // Kept for this tab, so the transcript read back after a reload still shows them.
        if (turn.kind === 'answers' && turn.text) rememberAnswers(data.runId, turn.text);
        setView((v) => ({ ...v, turns: updateLastTurn(v.turns, (t) => ({ ...t, runId: data.runId })) }));
      },
      onPart: (part) => setView((v) => ({ ...v, turns: updateLastTurn(v.turns, (t) => ({ ...t, parts: [...t.parts, part] })) })),
      onDelta: (text) => setView((v) => ({ ...v, turns: updateLastTurn(v.turns, (t) => ({ ...t, parts: appendDelta(t.parts, text) })) })),
    });
    setRunning(call);
    void call.finished.then((outcome) => {
      setRunning(undefined);
      setStopping(false);
      setView((v) => ended(v, outcome.kind === 'end' ? outcome.data : undefined, outcome.kind === 'error' ? outcome.error : undefined));
    });
  };

  return {
    ...view,
    convid,
    agentName: view.ask?.agentName ?? view.turns[view.turns.length - 1]?.agentName ?? view.summary?.pausedBy ?? view.summary?.lastAgentName ?? undefined,
    running: Boolean(running),
    stopping,
    search: (query, agentName = defaultAgent) => run(agentName, { query }, { kind: 'query', text: query }),
    answer: (answers, summary) => {
      if (view.ask) run(view.ask.agentName, answers, { kind: 'answers', text: summary });
    },
    stop: () => {
      if (!running || stopping) return;
      setStopping(true);
      running.stop().catch(() => setStopping(false));
    },
    startNew: () => {
      if (running) return;
      setConvid(undefined);
      setView({ turns: [] });
      navigate('/');
    },
  };
}

/** The view once a call has ended: its end (or error) on the last turn, and its ask, if any, pending. */
function ended(view: ConversationView, end: RunEndData | undefined, error: ApiErrorBody | undefined): ConversationView {
  const turns = updateLastTurn(view.turns, (t) => ({ ...t, end, error }));
  const { sentAnswers, ...rest } = view;
  if (end?.resultCode !== 'ask' || !end.askInput) return { ...rest, turns, ask: undefined };
  // Answers refused (error.fields): the same ask again, with what the user had sent.
  const refused = end.error?.fields && sentAnswers ? { refusedAnswers: sentAnswers } : {};
  return { ...rest, turns, ask: { agentName: end.agentName, askInput: end.askInput, fieldErrors: end.error?.fields, ...refused } };
}

/**
 * A conversation opened without a transcript on this page (a link, a reload, another device): its
 * turns read back from the server (/api/conv/get), and the ask it waits at, answerable here.
 */
async function loadTranscript(convid: string, setView: (update: (v: ConversationView) => ConversationView) => void) {
  let read: ConversationRead;
  try {
    read = await postJson<ConversationRead>('/api/conv/get', { convid });
  } catch {
    return; // not yours, expired, or not reachable: the page shows what it has
  }
  // A turn without a query answered an ask: its answers are shown if this tab sent them (sent-answers.ts).
  const turns: Turn[] = read.turns.map((turn) => ({
    id: nextTurnId++,
    runId: turn.runId,
    agentName: turn.agentName,
    kind: turn.query === null ? 'answers' : 'query',
    text: turn.query ?? recallAnswers(turn.runId) ?? null,
    parts: turn.output,
    end: { resultCode: turn.resultCode, convid, agentName: turn.agentName },
  }));
  const ask = read.pausedBy && read.askInput ? { agentName: read.pausedBy, askInput: read.askInput } : undefined;
  setView((v) => (v.turns.length ? v : { ...v, turns, ask }));
}
