import { useContext, useEffect, useRef, useState } from 'preact/hooks';
import { postRaw, type ApiErrorBody } from '../api/http';
import { readEventStream } from '../api/event-stream';
import { startStreamedRun, type RunningCall } from '../api/run-stream';
import type { Answers, RunEndData } from '../api/types';
import { appendDelta, ConversationStoreContext, updateLastTurn, type ConversationView, type Turn } from '../conversation-store';
import { navigate } from '../router';

let nextTurnId = 1;

export interface Conversation extends ConversationView {
  convid: string | undefined;
  running: boolean;
  /** True between the click on Stop and the end of the run. */
  stopping: boolean;
  search(query: string): void;
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

  // The address names a conversation (on opening, a link, back/forward): show it, with its last call
  // when this page has not seen it yet.
  useEffect(() => {
    if (running) return;
    const stored = routeConvid ? store.get(routeConvid) : undefined;
    if (routeConvid !== convidRef.current) {
      setConvid(routeConvid);
      setView(stored ?? { turns: [] });
    }
    if (routeConvid && !stored?.turns.length) void replayLastCall(routeConvid, stored ?? { turns: [] }, setView);
  }, [routeConvid]);

  useEffect(() => {
    if (convid) store.set(convid, view);
  }, [convid, view]);

  const run = (agentName: string, inputs: Record<string, unknown>, turn: Pick<Turn, 'kind' | 'text'>) => {
    setView((v) => ({ ...v, ask: undefined, turns: [...v.turns, { id: nextTurnId++, ...turn, parts: [] }] }));
    const call = startStreamedRun('/api/exec/execAgent', { agentName, inputs, ...(convid ? { convid } : {}) }, {
      onStart: (data) => {
        setConvid(data.convid);
        navigate(`/c/${data.convid}`, { replace: true });
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
    running: Boolean(running),
    stopping,
    search: (query) => run(defaultAgent, { query }, { kind: 'query', text: query }),
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
  if (end?.resultCode !== 'ask' || !end.askInput) return { ...view, turns, ask: undefined };
  return { ...view, turns, ask: { agentName: end.agentName, askInput: end.askInput, fieldErrors: end.error?.fields } };
}

/**
 * A conversation opened without a transcript on this page: the server keeps the events of its last
 * streamed call for a few minutes (/api/exec/attach); when they are there, they show that call again.
 */
async function replayLastCall(convid: string, base: ConversationView, setView: (update: (v: ConversationView) => ConversationView) => void) {
  const turn: Turn = { id: nextTurnId++, kind: 'replayed', text: base.summary?.lastQuery ?? null, parts: [] };
  let end: RunEndData | undefined;
  const parts: Turn['parts'] = [];
  try {
    const response = await postRaw('/api/exec/attach', { convid }, { headers: { 'Last-Event-ID': '0' } });
    if (!response.body) return;
    await readEventStream(response.body, (event) => {
      if (event.event === 'part') parts.push(event.data as Turn['parts'][number]);
      else if (event.event === 'delta') parts.splice(0, parts.length, ...appendDelta(parts, (event.data as { text: string }).text));
      else if (event.event === 'end') end = event.data as RunEndData;
    });
  } catch {
    return; // nothing kept (404) or not reachable: the page shows the conversation's summary only
  }
  if (end) setView((v) => (v.turns.length ? v : ended({ ...v, turns: [{ ...turn, parts }] }, end, undefined)));
}
