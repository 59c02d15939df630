import assert from 'node:assert/strict';
import type { AskInput } from '../../shared/api.js';
import { validateAnswers } from '../../workers/runs/validate-answers.js';

const ask: AskInput = {
  message: 'm',
  inputs: [
    { name: 's', type: 'str', label: null, description: null, options: null, default: null },
    { name: 'p', type: 'password', label: null, description: null, options: null, default: null },
    { name: 't', type: 'text', label: null, description: null, options: null, default: 'dflt' },
    { name: 'one', type: 'chooseOne', label: null, description: null, options: [{ value: 'a', label: 'A' }, { value: 'b', label: 'B' }], default: null },
    { name: 'many', type: 'chooseMany', label: null, description: null, options: [{ value: 'x', label: 'X' }, { value: 'y', label: 'Y' }], default: null },
  ],
};
const good = { s: 'line', p: 'pw', one: 'b', many: ['y', 'x'] };

describe('validateAnswers', () => {
  it('accepts valid answers, fills defaults and ignores keys that name no input', () => {
    assert.deepEqual(validateAnswers(ask, { ...good, query: 'ignored' }), { ok: true, answers: { ...good, t: 'dflt' } });
  });

  it('accepts an empty chooseMany list and an empty string', () => {
    assert.equal(validateAnswers(ask, { ...good, many: [], s: '' }).ok, true);
  });

  it('names each missing answer', () => {
    const result = validateAnswers(ask, { one: 'a', many: [] });
    assert.deepEqual(result.ok ? [] : Object.keys(result.fields).sort(), ['p', 's']);
  });

  for (const [name, inputs] of [
    ['a chooseOne value outside the options', { ...good, one: 'c' }],
    ['a chooseOne list', { ...good, one: ['a'] }],
    ['a chooseMany value outside the options', { ...good, many: ['x', 'z'] }],
    ['a chooseMany option twice', { ...good, many: ['x', 'x'] }],
    ['a chooseMany string', { ...good, many: 'x' }],
    ['a number for a string', { ...good, s: 5 }],
    ['two lines for a str', { ...good, s: 'a\nb' }],
    ['an object for a password', { ...good, p: { pw: 1 } }],
  ] as const) {
    it(`refuses ${name}`, () => {
      const result = validateAnswers(ask, inputs as never);
      assert.equal(result.ok, false);
      assert.equal(Object.keys(result.ok ? {} : result.fields).length, 1);
    });
  }
});
