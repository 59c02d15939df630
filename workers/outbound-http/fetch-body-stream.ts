import type { ClientRequest, IncomingMessage } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import { onFetchAbort, type FetchAbort } from './fetch-abort.js';

/**
 * The body of a streamed sys.fetch response (DESIGN §13), read as the agent asks for it. Each read
 * hands over all the text that has arrived since the last one (at least one chunk: it waits when
 * none has), so a slow agent gets fewer, larger chunks instead of a backlog. What has arrived and not
 * been read is bounded: past `maxQueuedBytes` the socket is paused until the agent reads.
 *
 * A failure (the timeout, the run's end, a cut connection, a body past the limit) destroys the
 * request at once; the text that arrived before it is still read first, then the failure is thrown.
 */
export interface FetchBodyStream {
  /** The next text, or null once the body has ended. */
  read(): Promise<string | null>;
  /** Stops reading: the connection is closed unless the body had ended. */
  close(): void;
}

export interface BodyStreamOptions {
  /** How long one read may wait for the next chunk; null: no timer of its own (the run's deadline ends it). */
  timeoutMs: number | null;
  /** Aborted when the run ends. */
  abort: FetchAbort;
  maxBytes: number;
}

const maxQueuedBytes = 256 * 1024;

export function readBodyStream(req: ClientRequest, res: IncomingMessage, options: BodyStreamOptions): FetchBodyStream {
  const decoder = new StringDecoder('utf8');
  const queue: string[] = [];
  let queuedBytes = 0;
  let receivedBytes = 0;
  let ended = false;
  let failure: Error | null = null;
  let waiter: { resolve: (text: string | null) => void; reject: (err: Error) => void } | null = null;
  // One timer for the stream, not one per read (a streamed LLM answer is read a token at a time): a
  // read that waits notes when it began, and the timer, when it fires, fails a read that has waited
  // timeoutMs or sleeps again for the rest. A read answered meanwhile leaves it to lapse.
  let waitingSince = 0;
  let timer: NodeJS.Timeout | undefined;
  const checkWait = () => {
    timer = undefined;
    const timeoutMs = options.timeoutMs;
    if (!waiter || timeoutMs === null) return;
    const left = waitingSince + timeoutMs - performance.now();
    if (left > 0) timer = setTimeout(checkWait, left);
    else fail(new Error(`no data for ${timeoutMs} ms`));
  };

  const settleWaiter = () => {
    if (!waiter) return;
    const { resolve, reject } = waiter;
    if (queue.length > 0) resolve(takeQueued());
    else if (failure) reject(failure);
    else if (ended) resolve(null);
    else return;
    waiter = null;
  };
  const takeQueued = () => {
    const text = queue.length === 1 ? queue[0]! : queue.join('');
    queue.length = 0;
    queuedBytes = 0;
    if (res.isPaused() && !ended && !failure) res.resume();
    return text;
  };
  const fail = (err: Error) => {
    if (ended || failure) return;
    failure = err;
    stopWatching();
    req.destroy();
    settleWaiter();
  };
  let stopListening: (() => void) | undefined;
  const stopWatching = () => {
    clearTimeout(timer);
    stopListening?.();
  };

  if (options.abort.aborted) fail(new Error('the run ended'));
  else stopListening = onFetchAbort(options.abort, () => fail(new Error('the run ended')));
  res.on('data', (chunk: Buffer) => {
    receivedBytes += chunk.length;
    if (receivedBytes > options.maxBytes) return fail(new Error(`response body larger than ${options.maxBytes} bytes`));
    const text = decoder.write(chunk);
    if (text === '') return;
    queue.push(text);
    queuedBytes += chunk.length;
    if (queuedBytes > maxQueuedBytes) res.pause();
    settleWaiter();
  });
  res.on('end', () => {
    if (failure) return;
    const rest = decoder.end();
    if (rest !== '') queue.push(rest);
    ended = true;
    stopWatching();
    settleWaiter();
  });
  // A cut connection surfaces as an 'aborted' error, then 'close': both say the same to the agent.
  const cut = () => fail(new Error('connection closed before the response ended'));
  res.on('error', (err) => (res.complete ? fail(err) : cut()));
  res.on('close', () => {
    if (!res.complete) cut();
  });

  return {
    read() {
      if (waiter) return Promise.reject(new Error('a read of this body is already waiting'));
      return new Promise((resolve, reject) => {
        waiter = { resolve, reject };
        settleWaiter();
        if (!waiter || options.timeoutMs === null) return;
        waitingSince = performance.now();
        timer ??= setTimeout(checkWait, options.timeoutMs);
      });
    },
    close() {
      if (ended || failure) return;
      failure = new Error('the body was closed');
      stopWatching();
      req.destroy();
      settleWaiter();
    },
  };
}
