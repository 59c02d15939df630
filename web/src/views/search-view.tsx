import { useEffect, useRef, useState } from 'preact/hooks';
import { AskForm } from '../components/ask-form';
import { OutputParts } from '../components/output-parts';
import { endAnnouncement, ResultMessage } from '../components/result-message';
import type { Turn } from '../conversation-store';
import { resultMessages } from '../messages';
import { useSession } from '../session';
import { useConversation } from './use-conversation';
import { postJson } from '../api/http';
import { useDocumentTitle } from '../document-title';

/**
 * The search page: the user's text goes to the default agent's inputs.query, streamed into the
 * transcript; its asks become forms; Stop cancels the run. Follow-up searches continue the conversation.
 */
export function SearchView({ defaultAgent, convid: routeConvid }: { defaultAgent: string; convid?: string }) {
  const session = useSession();
  const conversation = useConversation(defaultAgent, routeConvid);
  const { turns, ask, running, stopping, summary } = conversation;
  const [query, setQuery] = useState('');
  const agents = usePublishedAgents();
  const [agentName, setAgentName] = useState(conversation.agentName ?? defaultAgent);
  const queryInput = useRef<HTMLInputElement>(null);
  const last = turns[turns.length - 1];

  // The picker shows the agent the conversation is with (opened from the list, a link or a reload, or
  // waiting for answers): a follow-up search goes on with it unless the user picks another.
  useEffect(() => {
    if (conversation.agentName) setAgentName(conversation.agentName);
  }, [conversation.convid, conversation.agentName]);
  useDocumentTitle(...(conversation.convid ? [conversation.agentName ?? agentName, 'conversation'] : ['Search']));

  useEffect(() => {
    if (last?.end?.resultCode === 'mustLogin') session.ended(resultMessages.mustLogin);
  }, [last?.end]);

  // The search box is what the page is for: it has the focus when the page opens (after sign-in too),
  // unless an ask is waiting (its form takes the focus).
  useEffect(() => {
    if (!ask) queryInput.current?.focus();
  }, []);

  const submit = (event: Event) => {
    event.preventDefault();
    const text = query.trim();
    if (!text || running || ask) return;
    setQuery('');
    conversation.search(text, agentName);
  };
  const startNew = () => {
    conversation.startNew();
    queryInput.current?.focus();
  };

  const status = running ? (stopping ? 'Stopping…' : 'The agent is answering…') : endAnnouncement(last?.end, last?.error);
  return (
    <section class="search" aria-labelledby="search-heading">
      <h1 id="search-heading" class="visually-hidden">
        Search
      </h1>
      <form role="search" class="search-form" onSubmit={submit}>
        {agents.length > 1 && (
          <div class="agent-pick">
            <label for="agent">Agent</label>
            <select id="agent" value={agentName} disabled={running || Boolean(ask)} onChange={(event) => setAgentName((event.currentTarget as HTMLSelectElement).value)}>
              {(agents.includes(agentName) ? agents : [agentName, ...agents]).map((name) => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
            </select>
          </div>
        )}
        <label for="query">Search</label>
        <div class="search-row">
          <input
            id="query"
            ref={queryInput}
            type="search"
            value={query}
            autocomplete="off"
            disabled={Boolean(ask)}
            aria-describedby={ask ? 'query-paused' : undefined}
            onInput={(event) => setQuery((event.currentTarget as HTMLInputElement).value)}
          />
          {running ? (
            <button type="button" class="stop" onClick={conversation.stop} disabled={stopping}>
              Stop
            </button>
          ) : (
            <button type="submit" disabled={Boolean(ask)}>
              Search
            </button>
          )}
        </div>
        {ask && (
          <p class="hint" id="query-paused">
            Answer the questions below to go on, or start a new conversation.
          </p>
        )}
      </form>

      {conversation.convid && (
        <div class="conversation-bar">
          <span>{summary?.pinned ? 'Pinned conversation' : 'Conversation'}</span>
          <button type="button" class="secondary" onClick={startNew} disabled={running}>
            New conversation
          </button>
        </div>
      )}
      {conversation.convid && !turns.length && !running && (
        <p class="hint">
          {summary?.lastQuery ? `Last search: “${summary.lastQuery}”. ` : ''}
          {summary?.pausedBy
            ? `The agent ${summary.pausedBy} was waiting for answers here; its question can no longer be shown on this page.`
            : 'Your next search continues this conversation.'}
        </p>
      )}

      <div class="transcript" role="log" aria-live="polite" aria-label="Agent output">
        {turns.map((turn) => (
          <TurnView key={turn.id} turn={turn} />
        ))}
      </div>

      {ask && last && !running && (
        <AskForm key={last.id} ask={ask.askInput} fieldErrors={ask.fieldErrors} refusedAnswers={ask.refusedAnswers} disabled={running} onAnswer={conversation.answer} />
      )}
      <p class="visually-hidden" role="status">
        {status}
      </p>
    </section>
  );
}

/** The names of the published agents, once read (none until then, or when the list cannot be read). */
function usePublishedAgents(): string[] {
  const [names, setNames] = useState<string[]>([]);
  useEffect(() => {
    postJson<{ agents: { agentName: string }[] }>('/api/user/listAgents', {}).then(
      (list) => setNames(list.agents.map((agent) => agent.agentName)),
      () => undefined, // the search box still runs the default agent
    );
  }, []);
  return names;
}

function TurnView({ turn }: { turn: Turn }) {
  return (
    <article class="turn" data-turn={turn.id}>
      {turn.kind === 'answers' ? (
        <p class="turn-sent turn-answers">{turn.text ? `Your answers — ${turn.text}` : 'Your answers — not shown: the server does not keep answers, and they were sent from another tab or device.'}</p>
      ) : (
        turn.text && <p class={`turn-sent turn-${turn.kind}`}>{turn.text}</p>
      )}
      <OutputParts parts={turn.parts} />
      <ResultMessage end={turn.end} error={turn.error} />
    </article>
  );
}
