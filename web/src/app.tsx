import { useEffect, useMemo, useState } from 'preact/hooks';
import { forgetAnswers } from './sent-answers';
import { useDocumentTitle } from './document-title';
import { ApiError, handleSessionEnded, postJson } from './api/http';
import type { UserProfile } from './api/types';
import { ConsolePageView } from './console/console-pages';
import { ConversationStoreContext, createConversationStore } from './conversation-store';
import { Header } from './header';
import { sessionEndedMessage } from './messages';
import { navigate, parseRoute, usePath } from './router';
import { canDevelop, isAdmin, SessionContext, type Session } from './session';
import { ConversationsView } from './views/conversations-view';
import { DraftEditorView } from './views/draft-editor-view';
import { DraftsView } from './views/drafts-view';
import { PasswordView } from './views/password-view';
import { RunsView } from './views/runs-view';
import { RunView } from './views/run-view';
import { QueuesView } from './views/queues-view';
import { SearchView } from './views/search-view';
import { SignInView } from './views/sign-in-view';

type SignIn = { state: 'loading' } | { state: 'signedOut'; notice?: string } | { state: 'signedIn'; user: UserProfile };

/** The app: sign-in until there is a session, then the search, conversations and (for developers) drafts. */
export function App({ defaultAgent }: { defaultAgent: string }) {
  const [signIn, setSignIn] = useState<SignIn>({ state: 'loading' });
  const store = useMemo(createConversationStore, []);
  const route = parseRoute(usePath());

  const loadProfile = async () => {
    try {
      setSignIn({ state: 'signedIn', user: await postJson<UserProfile>('/api/user/getUserProfile', {}, { signedIn: false }) });
    } catch (err) {
      const ended = err instanceof ApiError && err.body.details?.sessionEnded === true;
      setSignIn({ state: 'signedOut', notice: ended ? sessionEndedMessage : err instanceof ApiError && err.status === 401 ? undefined : 'The server could not be reached. Reload to try again.' });
    }
  };
  useEffect(() => {
    void loadProfile();
    handleSessionEnded(() => {
      store.clear();
      forgetAnswers();
      setSignIn({ state: 'signedOut', notice: sessionEndedMessage });
    });
  }, []);

  const session = useMemo<Session | undefined>(() => {
    if (signIn.state !== 'signedIn') return undefined;
    return {
      user: signIn.user,
      async signOut() {
        await postJson('/api/auth/logout', {}, { signedIn: false }).catch(() => undefined);
        store.clear();
        forgetAnswers();
        setSignIn({ state: 'signedOut', notice: 'You are signed out.' });
        navigate('/');
      },
      ended(notice) {
        store.clear();
        forgetAnswers();
        setSignIn({ state: 'signedOut', notice });
      },
    };
  }, [signIn]);

  if (signIn.state === 'loading') return <p role="status" class="loading">Loading…</p>;
  if (!session) {
    const signedIn = async () => {
      await loadProfile();
      if (route.view === 'password') navigate('/');
    };
    return route.view === 'password' ? <PasswordView onSignedIn={signedIn} /> : <SignInView notice={(signIn as { notice?: string }).notice} onSignedIn={signedIn} />;
  }
  return (
    <SessionContext.Provider value={session}>
      <ConversationStoreContext.Provider value={store}>
        <Header />
        <main id="main">{page(route, defaultAgent, canDevelop(session.user), isAdmin(session.user))}</main>
      </ConversationStoreContext.Provider>
    </SessionContext.Provider>
  );
}

function page(route: ReturnType<typeof parseRoute>, defaultAgent: string, developer: boolean, admin: boolean) {
  switch (route.view) {
    case 'conversations':
      return <ConversationsView />;
    case 'runs':
      return admin ? <RunsView /> : <NotAllowed who="administrators" />;
    case 'console':
      return admin ? <ConsolePageView page={route.page} /> : <NotAllowed who="administrators" />;
    case 'run':
      return admin ? <RunView runId={route.runId} /> : <NotAllowed who="administrators" />;
    case 'queues':
      return admin ? <QueuesView /> : <NotAllowed who="administrators" />;
    case 'drafts':
      return developer ? <DraftsView /> : <NotAllowed />;
    case 'draft':
      return developer ? <DraftEditorView draftid={route.draftid} /> : <NotAllowed />;
    case 'search':
    case 'password':
      return <SearchView defaultAgent={defaultAgent} convid={route.view === 'search' ? route.convid : undefined} />;
  }
}

function NotAllowed({ who = 'developers' }: { who?: 'developers' | 'administrators' }) {
  useDocumentTitle('Not allowed');
  if (who === 'administrators') return <p class="field-error">This page is for administrators.</p>;
  return <p class="field-error">This page is for developers. Ask an administrator for the developer role.</p>;
}
