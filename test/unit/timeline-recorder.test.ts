import assert from 'node:assert/strict';
import { maxTimelineEntries, maxTimelineTextLength, timelineEntry } from '../../shared/run-timeline.js';
import { createTimelineRecorder } from '../../workers/runs/timeline-recorder.js';
import { isStorableText } from '../../shared/storable-text.js';

describe('a run timeline recorder', () => {
  const at = '2026-01-01T00:00:00.000Z';

  it('masks secret values in every text and keeps a URL without its query or fragment', () => {
    const recorder = createTimelineRecorder(['s3cret-value', 'hunter2']);
    recorder.onTimeline({ kind: 'fetch', at, method: 'GET', url: 'https://api.example/s3cret-value/x?key=abc#top', status: null, error: 'refused: s3cret-value', durationMs: 3 });
    recorder.onTimeline({ kind: 'log', at, text: 'password hunter2 and s3cret-value' });
    recorder.onTimeline({ kind: 'ask', at, message: 'was it hunter2?' });
    assert.deepEqual(recorder.entries, [
      { kind: 'fetch', at, method: 'GET', url: 'https://api.example/********/x', status: null, error: 'refused: ********', durationMs: 3 },
      { kind: 'log', at, text: 'password ******** and ********' },
      { kind: 'ask', at, message: 'was it ********?' },
    ]);
    for (const entry of recorder.entries) assert.ok(timelineEntry.safeParse(entry).success, 'as the API documents it');
  });

  it(`cuts texts to ${maxTimelineTextLength} characters and keeps ${maxTimelineEntries} entries, then one truncated`, () => {
    const recorder = createTimelineRecorder([]);
    recorder.onTimeline({ kind: 'log', at, text: 'x'.repeat(maxTimelineTextLength + 10) });
    assert.equal((recorder.entries[0] as { text: string }).text.length, maxTimelineTextLength);
    assert.ok((recorder.entries[0] as { text: string }).text.endsWith('…'));
    for (let i = 0; i < maxTimelineEntries + 50; i++) recorder.onTimeline({ kind: 'log', at, text: String(i) });
    assert.equal(recorder.entries.length, maxTimelineEntries + 1);
    assert.equal(recorder.entries.at(-1)!.kind, 'truncated');
    assert.equal(recorder.entries.at(-2)!.kind, 'log');
  });

  it('never cuts between the halves of a surrogate pair, and replaces what PostgreSQL cannot store', () => {
    const recorder = createTimelineRecorder([]);
    recorder.onTimeline({ kind: 'ask', at, message: '😀'.repeat(maxTimelineTextLength) });
    recorder.onTimeline({ kind: 'log', at, text: 'lone \ud800 half' });
    const [ask, log] = recorder.entries as { message?: string; text?: string }[];
    assert.ok(isStorableText(ask!.message!), 'the cut ends on a whole character');
    assert.ok(ask!.message!.endsWith('😀…'));
    assert.equal(log!.text, 'lone \ufffd half');
  });
});

