import { useEffect } from 'preact/hooks';

const appName = 'agentexec';

/** Names the screen in the tab and the history: "<what> — agentexec" (the app's name alone when `what` is empty). */
export function useDocumentTitle(...what: (string | undefined)[]): void {
  const title = [...what.filter((part): part is string => Boolean(part)), appName].join(' — ');
  useEffect(() => {
    document.title = title;
  }, [title]);
}
