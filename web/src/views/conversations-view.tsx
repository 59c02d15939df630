import { useContext, useEffect, useState } from 'preact/hooks';
import { useDocumentTitle } from '../document-title';
import { ApiError, postJson } from '../api/http';
import type { ConversationSummary } from '../api/types';
import { ConversationStoreContext } from '../conversation-store';
import { errorMessage } from '../messages';
import { followLink } from '../router';

const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** The user's conversations, most recent first: open one to continue it, pin it to keep it. */
export function ConversationsView() {
  const store = useContext(ConversationStoreContext);
  const [conversations, setConversations] = useState<ConversationSummary[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  useDocumentTitle('Conversations');

  useEffect(() => {
    postJson<{ conversations: ConversationSummary[] }>('/api/conv/list', {}).then(
      (body) => setConversations(body.conversations),
      (err: unknown) => setError(err instanceof ApiError ? errorMessage(err.body) : 'The conversations could not be loaded.'),
    );
  }, []);

  const open = (event: MouseEvent, conversation: ConversationSummary) => {
    store.set(conversation.convid, { turns: [], ...store.get(conversation.convid), summary: conversation });
    followLink(event);
  };
  const pin = async (conversation: ConversationSummary, pinned: boolean) => {
    setError(undefined);
    try {
      const changed = await postJson<{ convid: string; pinned: boolean }>('/api/conv/pin', { convid: conversation.convid, pinned });
      setConversations((list) => list?.map((c) => (c.convid === changed.convid ? { ...c, pinned: changed.pinned, expiresAt: changed.pinned ? null : c.expiresAt } : c)));
    } catch (err) {
      setError(err instanceof ApiError ? errorMessage(err.body) : 'That did not work. Try again.');
    }
  };

  return (
    <section aria-labelledby="conversations-heading">
      <h1 id="conversations-heading">Conversations</h1>
      {error && (
        <p class="field-error" role="alert">
          {error}
        </p>
      )}
      {!conversations && !error && <p role="status">Loading…</p>}
      {conversations && !conversations.length && <p>No conversations yet. Start one with a search.</p>}
      {conversations && conversations.length > 0 && (
        <ul class="conversations">
          {conversations.map((conversation) => {
            const title = conversation.title || conversation.lastQuery || (conversation.pausedBy ? `Waiting for answers (${conversation.pausedBy})` : 'Conversation');
            return (
              <li key={conversation.convid} class="conversation" data-convid={conversation.convid}>
                <a class="conversation-open" href={`/c/${conversation.convid}`} onClick={(event) => open(event, conversation)}>
                  {title}
                </a>
                <p class="hint">
                  {conversation.lastAgentName ?? 'agent'} · last used {when.format(new Date(conversation.lastUsedAt))} ·{' '}
                  {conversation.pinned ? 'pinned, kept until unpinned' : `kept until ${when.format(new Date(conversation.expiresAt!))}`}
                </p>
                <button type="button" class="secondary" aria-label={`${conversation.pinned ? 'Unpin' : 'Pin'} “${title}”`} onClick={() => void pin(conversation, !conversation.pinned)}>
                  {conversation.pinned ? 'Unpin' : 'Pin'}
                </button>
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
