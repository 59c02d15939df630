import { useEffect, useState } from 'preact/hooks';
import { consolePages, type ConsolePage } from './console/console-paths';

/** The app's own paths, routed in the page (the server answers index.html for each of them). */
export type Route =
  | { view: 'search'; convid?: string }
  | { view: 'conversations' }
  | { view: 'drafts' }
  | { view: 'draft'; draftid?: string }
  | { view: 'password' }
  | { view: 'runs' }
  | { view: 'console'; page: ConsolePage }
  | { view: 'run'; runId: string }
  | { view: 'queues' };

export function parseRoute(path: string): Route {
  const conversation = /^\/c\/([0-9a-f-]{36})$/i.exec(path);
  if (conversation) return { view: 'search', convid: conversation[1] };
  if (path === '/conversations') return { view: 'conversations' };
  if (path === '/dev') return { view: 'drafts' };
  if (path === '/dev/new') return { view: 'draft' };
  const draft = /^\/dev\/drafts\/([^/]+)$/.exec(path);
  if (draft) return { view: 'draft', draftid: decodeURIComponent(draft[1]!) };
  if (path === '/password') return { view: 'password' };
  if (path === '/runs') return { view: 'runs' };
  const consolePage = consolePages.find((page) => path === `/${page}`);
  if (consolePage) return { view: 'console', page: consolePage };
  const run = /^\/runs\/([0-9a-f-]{36})$/i.exec(path);
  if (run) return { view: 'run', runId: run[1]!.toLowerCase() };
  if (path === '/queues') return { view: 'queues' };
  return { view: 'search' };
}

const listeners = new Set<() => void>();

/** Goes to `path` in the page; `replace` does not add a history entry. */
export function navigate(path: string, options: { replace?: boolean } = {}): void {
  if (path === location.pathname) return;
  if (options.replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  for (const listener of listeners) listener();
}

/** The current path; re-renders on navigate() and on the browser's back and forward. */
export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    listeners.add(update);
    addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      removeEventListener('popstate', update);
    };
  }, []);
  return path;
}

/** An onClick for links to the app's own paths: navigates in the page unless the user asked for a new tab. */
export function followLink(event: MouseEvent): void {
  const link = event.currentTarget as HTMLAnchorElement;
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(link.pathname);
}
