import assert from 'node:assert/strict';
import { createEventStreamParser, type ServerSentEvent } from '../../shared/server-sent-events.js';

function parseInPieces(pieces: string[]): ServerSentEvent[] {
  const parser = createEventStreamParser();
  return pieces.flatMap((piece) => parser.push(piece));
}

describe('server-sent events parser', () => {
  const stream = '\uFEFFretry: 10\nid: 1\nevent: delta\ndata: {"t":"Hel"}\n\n: keep-alive\n\ndata:lo\ndata:  two spaces\r\n\r\nid\ndata\n\n';
  const expected: ServerSentEvent[] = [
    { event: 'delta', data: '{"t":"Hel"}', id: '1' },
    { event: 'message', data: 'lo\n two spaces', id: '1' },
    { event: 'message', data: '', id: '' },
  ];

  it('reads events, ids, comments and the three line endings as the HTML standard does', () => {
    assert.deepEqual(parseInPieces([stream]), expected);
  });

  it('gives the same events however the text is split, a CRLF across two chunks included', () => {
    for (let cut = 1; cut < stream.length; cut++) {
      assert.deepEqual(parseInPieces([stream.slice(0, cut), stream.slice(cut)]), expected, `cut at ${cut}`);
    }
    assert.deepEqual(parseInPieces([...stream]), expected, 'one character at a time');
    assert.deepEqual(parseInPieces(['data: a\r', '\ndata: b\r', '\r\n']), [{ event: 'message', data: 'a\nb', id: '' }]);
  });

  it('dispatches nothing for an event without data or one the stream never finished', () => {
    assert.deepEqual(parseInPieces(['event: ping\n\n', 'data: unfinished\n']), []);
  });
});
