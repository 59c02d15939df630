/** One server-sent event (DESIGN §4 Streaming): `id:`, `event:` and one `data:` line of JSON. */
export interface StreamEvent {
  id: string | undefined;
  event: string;
  data: unknown;
}

/**
 * Reads a text/event-stream body as it arrives and calls `onEvent` for each event, in order.
 * Comment lines (`: keep-alive`) are skipped. Resolves when the server ends the body.
 */
export async function readEventStream(body: ReadableStream<Uint8Array>, onEvent: (event: StreamEvent) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
    buffer = buffer.replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = parseEvent(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (event) onEvent(event);
    }
    if (done) return;
  }
}

function parseEvent(block: string): StreamEvent | undefined {
  let id: string | undefined;
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (!data.length) return undefined;
  try {
    return { id, event, data: JSON.parse(data.join('\n')) };
  } catch {
    return undefined;
  }
}
