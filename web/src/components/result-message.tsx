import type { ApiErrorBody } from '../api/http';
import type { RunEndData } from '../api/types';
import { errorMessage, resultMessages } from '../messages';

/** How a call ended, in words: nothing for success and ask (the output and the form say it), else a message. */
export function ResultMessage({ end, error }: { end?: RunEndData; error?: ApiErrorBody }) {
  if (error) {
    return (
      <p class="result result-error" data-code={error.code}>
        {errorMessage(error)}
      </p>
    );
  }
  if (!end || end.resultCode === 'success' || end.resultCode === 'ask') return null;
  // The agent's own message says more for these; for the others ours says it all.
  const detail = ['failCommand', 'errorInAgent', 'callFailed', 'unexpected'].includes(end.resultCode) ? end.error?.message : undefined;
  return (
    <div class={`result result-${end.resultCode === 'stopped' ? 'stopped' : 'error'}`} data-code={end.resultCode}>
      <p>{resultMessages[end.resultCode]}</p>
      {detail && <p class="result-detail">{detail}</p>}
    </div>
  );
}

/** The words the status region announces once a call has ended. */
export function endAnnouncement(end: RunEndData | undefined, error: ApiErrorBody | undefined): string {
  if (error) return errorMessage(error);
  return end ? resultMessages[end.resultCode] : '';
}
