import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { UserProfile } from './api/types';

/** The signed-in user and what ends the session, for the views of a signed-in page. */
export interface Session {
  user: UserProfile;
  signOut(): Promise<void>;
  /** The session ended under the page (a 401, or a run ended mustLogin): back to sign-in with `message`. */
  ended(message: string): void;
}

export const SessionContext = createContext<Session | undefined>(undefined);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in page');
  return session;
}

/** Admins see the console (DESIGN §18): every caller's runs. */
export function isAdmin(user: UserProfile): boolean {
  return user.role === 'admin';
}

/** Developers and admins may edit and validate drafts. */
export function canDevelop(user: UserProfile): boolean {
  return user.role === 'developer' || user.role === 'admin';
}
