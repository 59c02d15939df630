import assert from 'node:assert/strict';
import { AskSpecError, normaliseAskSpec } from '../../workers/sandbox/ask-spec.js';
import { AgentFault } from '../../workers/sandbox/error-codes.js';
import {
  chargeJournal,
  createJournal,
  isReplaying,
  maxJournalBytes,
  maxJournalEntries,
  recordEntry,
  ReplayDivergedError,
  takeReplayed,
} from '../../workers/sandbox/journal.js';
import { addPart, createOutput, imagePart, maxOutputParts, OutputTooLargeError, writeText } from '../../workers/sandbox/output.js';

describe('ask spec', () => {
  it('fills all six descriptor fields, null where not given', () => {
    assert.deepEqual(normaliseAskSpec({ message: 'Who?', inputs: [{ name: 'who', type: 'str' }] }), {
      message: 'Who?',
      inputs: [{ name: 'who', type: 'str', label: null, description: null, options: null, default: null }],
    });
  });

  it('turns string options into {value, label} and keeps given labels', () => {
    const ask = normaliseAskSpec({
      message: 'Pick',
      inputs: [{ name: 'c', type: 'chooseMany', label: 'Colours', options: ['red', { value: 'b', label: 'Blue' }, { value: 'g' }], default: ['red'] }],
    });
    assert.deepEqual(ask.inputs[0], {
      name: 'c',
      type: 'chooseMany',
      label: 'Colours',
      description: null,
      options: [
        { value: 'red', label: 'red' },
        { value: 'b', label: 'Blue' },
        { value: 'g', label: 'g' },
      ],
      default: ['red'],
    });
  });

  it('refuses specs that cannot be asked', () => {
    const bad: unknown[] = [
      null,
      'ask me',
      { inputs: [{ name: 'a', type: 'str' }] },
      { message: 'm', inputs: [] },
      { message: 'm', inputs: [{ name: '', type: 'str' }] },
      { message: 'm', inputs: [{ name: 'a', type: 'number' }] },
      { message: 'm', inputs: [{ name: 'a', type: 'str' }, { name: 'a', type: 'text' }] },
      { message: 'm', inputs: [{ name: 'a', type: 'chooseOne' }] },
      { message: 'm', inputs: [{ name: 'a', type: 'chooseOne', options: [] }] },
      { message: 'm', inputs: [{ name: 'a', type: 'chooseOne', options: ['x'], default: 'y' }] },
      { message: 'm', inputs: [{ name: 'a', type: 'str', options: ['x'] }] },
      { message: 'm', inputs: [{ name: 'a', type: 'str', lable: 'typo' }] },
      { message: 'm', inputs: [{ name: 'a', type: 'password', label: 5 }] },
    ];
    for (const spec of bad) assert.throws(() => normaliseAskSpec(spec), AskSpecError, JSON.stringify(spec));
  });
});

describe('journal', () => {
  it('returns recorded entries in order, then goes live', () => {
    const journal = createJournal([{ op: 'now', value: 5 }, { op: 'sleep', ms: 10 }]);
    assert.equal(isReplaying(journal), true);
    assert.deepEqual(takeReplayed(journal, 'now'), { op: 'now', value: 5 });
    assert.deepEqual(takeReplayed(journal, 'sleep'), { op: 'sleep', ms: 10 });
    assert.equal(isReplaying(journal), false);
    assert.equal(takeReplayed(journal, 'now'), undefined);
    recordEntry(journal, { op: 'now', value: 6 });
    assert.equal(journal.recorded.length, 3);
  });

  it('detects a call of another kind, or a changed call, as divergence', () => {
    assert.throws(() => takeReplayed(createJournal([{ op: 'now', value: 1 }]), 'sleep'), (err: Error) => {
      return err instanceof ReplayDivergedError && err.message.startsWith('replay diverged');
    });
    const journal = createJournal([{ op: 'sleep', ms: 10 }]);
    assert.throws(() => takeReplayed(journal, 'sleep', (e) => (e.ms === 20 ? null : 'ms differs')), /^ReplayDivergedError: replay diverged/);
  });

  it('bounds the number and size of journaled calls', () => {
    const journal = createJournal([]);
    journal.recorded = new Array(maxJournalEntries);
    assert.throws(() => recordEntry(journal, { op: 'now', value: 1 }), AgentFault);
    assert.throws(() => chargeJournal(createJournal([]), maxJournalBytes + 1), /journal too large/);
  });
});

describe('output', () => {
  it('caps output bytes, counting UTF-8, and adds nothing past the cap', () => {
    const output = createOutput(10);
    addPart(output, { type: 'text', text: 'ééé' });
    assert.equal(output.bytes, 6);
    writeText(output, 'abcd');
    assert.throws(() => writeText(output, 'x'), OutputTooLargeError);
    assert.deepEqual(output.parts, [{ type: 'text', text: 'éééabcd' }]);
  });

  it('caps the number of parts, empty ones included', () => {
    const output = createOutput();
    output.parts = new Array(maxOutputParts);
    assert.throws(() => addPart(output, { type: 'text', text: '' }), /output too large/);
  });

  it('makes image parts from URLs, data URLs and base64', () => {
    assert.deepEqual(imagePart('HTTPS://x.test/a.jpg?v=1', null), { type: 'image', mimeType: 'image/jpeg', url: 'HTTPS://x.test/a.jpg?v=1' });
    assert.deepEqual(imagePart('data:image/png;base64,AAAA', null), { type: 'image', mimeType: 'image/png', data: 'AAAA' });
    assert.deepEqual(imagePart('AAAA', 'image/webp'), { type: 'image', mimeType: 'image/webp', data: 'AAAA' });
    assert.throws(() => imagePart('data:text/plain,hello', null), /base64/);
  });
});
