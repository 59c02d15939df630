import type { ChangeStatus, Loaded } from './use-admin';

/** The page's status line: how its last change went (an alert when it failed). */
export function StatusLine({ status }: { status: ChangeStatus | undefined }) {
  return (
    <p class={status?.failed ? 'field-error' : 'hint'} role={status?.failed ? 'alert' : 'status'}>
      {status?.text}
    </p>
  );
}

/** What a list being loaded shows until it is there: its load's error (an alert), or "Loading…". */
export function LoadState({ loaded }: { loaded: Pick<Loaded<unknown>, 'value' | 'error'> }) {
  if (loaded.error) {
    return (
      <p class="field-error" role="alert">
        {loaded.error}
      </p>
    );
  }
  return loaded.value === undefined ? <p role="status">Loading…</p> : null;
}
