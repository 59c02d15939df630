/**
 * An incremental parser of server-sent events, as the HTML standard's "event stream interpretation"
 * reads them: text is pushed in chunks split anywhere (a line, a CRLF, a field), each blank line
 * dispatches the event gathered so far, comment lines (`:`) are ignored, and an event without data is
 * not dispatched. The project's one parser of event streams: the TypeScript client reads the API's
 * streams with it (and so does the web app, through the client; the client's package compiles this
 * file in), and the worker parses an agent's `events()` with it (sys.fetch with `stream: true`,
 * workers/sandbox/streamed-fetch.ts). It stays pure (no platform API): the client runs in browsers.
 */

export interface ServerSentEvent {
  /** The `event` field; "message" when the event had none. */
  event: string;
  /** The `data` lines, joined with "\n". */
  data: string;
  /** The last event id seen on the stream so far; "" when none. */
  id: string;
}

export interface EventStreamParser {
  /** The events completed by this chunk, in order. */
  push(text: string): ServerSentEvent[];
}

export function createEventStreamParser(): EventStreamParser {
  let buffer = '';
  let started = false;
  let lastId = '';
  let eventType = '';
  let data: string[] = [];

  const takeLine = (line: string, events: ServerSentEvent[]) => {
    if (line === '') {
      if (data.length > 0) events.push({ event: eventType === '' ? 'message' : eventType, data: data.join('\n'), id: lastId });
      eventType = '';
      data = [];
      return;
    }
    if (line.charCodeAt(0) === 58 /* : */) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32 /* space */) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') eventType = value;
    else if (field === 'id' && !value.includes('\0')) lastId = value;
  };

  return {
    push(text) {
      buffer += text;
      if (!started && buffer.length > 0) {
        started = true;
        if (buffer.charCodeAt(0) === 0xfeff) buffer = buffer.slice(1);
      }
      const events: ServerSentEvent[] = [];
      let start = 0;
      for (let i = 0; i < buffer.length; i++) {
        const code = buffer.charCodeAt(i);
        if (code !== 10 && code !== 13) continue;
        // A CR at the end of the text may be the first half of a CRLF: wait for the next chunk.
        if (code === 13 && i === buffer.length - 1) break;
        takeLine(buffer.slice(start, i), events);
        if (code === 13 && buffer.charCodeAt(i + 1) === 10) i += 1;
        start = i + 1;
      }
      buffer = buffer.slice(start);
      return events;
    },
  };
}
