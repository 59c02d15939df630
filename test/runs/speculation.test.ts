import assert from 'node:assert/strict';
import type { OutputPart } from '../../shared/api.js';
import { speculate } from '../../workers/runs/speculation.js';
import type { RunEventSink } from '../../workers/runs/run-deps.js';

/** A run started before it is known to be the right one (workers/runs/speculation.ts). */
describe('speculation', () => {
  const recording = () => {
    const sent: string[] = [];
    const sink: RunEventSink = {
      part: (part: OutputPart) => sent.push(`part ${part.type === 'text' ? part.text : part.type}`),
      delta: (text) => sent.push(`delta ${text}`),
      trace: () => sent.push('trace'),
    };
    return { sent, sink };
  };

  const settled = <T>(promise: Promise<T>) => {
    let done = false;
    void promise.then(() => (done = true));
    return () => done;
  };

  it('holds back what the run sends until it is confirmed, then sends it in order and lets later parts through', async () => {
    const { sent, sink } = recording();
    let confirm!: (right: boolean) => void;
    const guess = speculate(sink, new AbortController().signal, new Promise<boolean>((resolve) => (confirm = resolve)));
    const held = settled(guess.hold);
    guess.sink.part({ type: 'text', text: 'a' });
    guess.sink.delta('b');
    await Promise.resolve();
    assert.deepEqual(sent, []);
    assert.equal(held(), false, 'its async calls wait');
    confirm(true);
    await guess.hold;
    guess.sink.delta('c');
    assert.deepEqual(sent, ['part a', 'delta b', 'delta c']);
    assert.equal(guess.wrong(), false);
    assert.equal(guess.signal.aborted, false);
    guess.end();
  });

  it('stops a wrong run before its held calls go on, and sends nothing of it, then or later', async () => {
    const { sent, sink } = recording();
    let confirm!: (right: boolean) => void;
    const guess = speculate(sink, new AbortController().signal, new Promise<boolean>((resolve) => (confirm = resolve)));
    guess.sink.part({ type: 'text', text: 'a' });
    confirm(false);
    await guess.hold;
    assert.equal(guess.signal.aborted, true, 'stopped by the time the held calls would go on');
    guess.sink.delta('late');
    await Promise.resolve();
    assert.deepEqual(sent, []);
    assert.equal(guess.wrong(), true);
  });

  it('counts a failed confirmation as wrong, and follows the call being stopped', async () => {
    const { sink } = recording();
    const failed = speculate(sink, new AbortController().signal, Promise.reject(new Error('read failed')));
    await failed.hold;
    assert.equal(failed.wrong(), true);
    assert.equal(failed.signal.aborted, true);

    const call = new AbortController();
    const guess = speculate(sink, call.signal, new Promise<boolean>(() => undefined));
    call.abort(new Error('cancelled'));
    assert.equal(guess.signal.aborted, true);
    assert.equal((guess.signal.reason as Error).message, 'cancelled', 'with the call’s reason (cancel, session ended)');
    guess.end();
  });
});
