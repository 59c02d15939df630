import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  failedPasswordRules,
  normalizePassword,
  passwordHelp,
  passwordLength,
  passwordRules,
  type PasswordRuleId,
} from '../../shared/password-rules.js';

/** The list as shipped (this file runs from dist/test/unit/). */
const commonList = readFileSync(new URL('../../../shared/data/common-passwords.txt', import.meta.url), 'utf8')
  .split('\n')
  .filter(Boolean);

const email = 'someone@example.com';
const check = (password: string, address = email) => failedPasswordRules(password, address);
const codePoints = (s: string) => [...s].length;

describe('password rules', () => {
  describe('length, in code points after NFC', () => {
    it('accepts 15 astral characters (30 UTF-16 units) and refuses 14', () => {
      const fifteen = '😀'.repeat(15);
      assert.equal(fifteen.length, 30);
      assert.deepEqual(check(fifteen), []);
      assert.deepEqual(check('😀'.repeat(14)), ['minLength']);
    });

    it('counts a combining sequence NFC composes as one character', () => {
      // 'e' + U+0301 is 2 code points raw, 1 ('é') after NFC.
      assert.equal(normalizePassword('e\u0301'), '\u00e9');
      assert.deepEqual(check('e\u0301'.repeat(15)), [], '30 code points raw, 15 after NFC');
      assert.deepEqual(check('e\u0301'.repeat(14)), ['minLength'], '28 code points raw, but only 14 after NFC');
    });

    it('keeps spaces: nothing is trimmed', () => {
      assert.deepEqual(check('  short pass   '), [], '15 with the spaces');
      assert.deepEqual(check('  short pass  '), ['minLength']);
    });

    it(`accepts ${passwordLength.max} code points and refuses ${passwordLength.max + 1} with only maxLength`, () => {
      assert.deepEqual(check('😀'.repeat(1024)), []);
      assert.deepEqual(check('😀'.repeat(1025)), ['maxLength']);
      // Would also break notEmailName and notProductName: a too-long password is refused for its length alone.
      assert.deepEqual(check('agentexec someone '.repeat(57), email), ['maxLength']);
      assert.equal(codePoints('agentexec someone '.repeat(57)), 1026);
    });

    it('refuses a raw input over the maximum even when NFC would shorten it', () => {
      const password = 'e\u0301'.repeat(513);
      assert.equal(codePoints(password), 1026);
      assert.equal(codePoints(normalizePassword(password)), 513);
      assert.deepEqual(check(password), ['maxLength']);
    });

    it('refuses a password NFC makes too long', () => {
      // U+0958 has no composed form: NFC turns it into 2 code points.
      const password = 'a'.repeat(1023) + '\u0958';
      assert.equal(codePoints(password), 1024);
      assert.equal(codePoints(normalizePassword(password)), 1025);
      assert.deepEqual(check(password), ['maxLength']);
    });

    it('refuses a 1,000,000-character string quickly', () => {
      const huge = 'x'.repeat(1_000_000);
      const start = process.hrtime.bigint();
      for (let i = 0; i < 200; i++) assert.deepEqual(check(huge), ['maxLength']);
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      // Spreading it into code points takes ~10 ms a time: 200 calls would take seconds.
      assert.ok(ms < 500, `200 checks took ${ms.toFixed(0)} ms`);
    });
  });

  describe('notCommon', () => {
    const longCommon = commonList.find((p) => codePoints(p) >= passwordLength.min && /[a-z]/.test(p));

    it('the list is large, lower-cased NFC, without duplicates', () => {
      assert.ok(commonList.length >= 10_000, `${commonList.length} entries`);
      assert.equal(new Set(commonList).size, commonList.length);
      for (const p of commonList) assert.equal(p, p.normalize('NFC').toLowerCase());
      assert.ok(longCommon, 'an entry at least 15 characters long');
    });

    it('refuses a long enough common password, in any case', () => {
      assert.ok(longCommon);
      assert.deepEqual(check(longCommon), ['notCommon']);
      assert.deepEqual(check(longCommon.toUpperCase()), ['notCommon']);
    });

    it('does not flag a common password padded to length', () => {
      assert.ok(commonList.includes('password'));
      assert.ok(!commonList.includes('password       '));
      assert.deepEqual(check('password'), ['minLength', 'notCommon']);
      assert.deepEqual(check('password       '), []);
    });
  });

  describe('notEmailName', () => {
    it('refuses a password containing the local part of the email, in any case', () => {
      assert.deepEqual(check('correct-horse-jsmith-battery', 'JSmith@Example.com'), ['notEmailName']);
      assert.deepEqual(check('Correct-Horse-JSMITH-Battery', 'jsmith@example.com'), ['notEmailName']);
      assert.deepEqual(check('correct-horse-jsmith-battery', 'jones@example.com'), []);
    });

    it('takes the local part before the last @', () => {
      assert.deepEqual(check('correct horse abc battery', 'abc@def@example.com'), []);
      assert.deepEqual(check('correct horse abc@def battery', 'abc@def@example.com'), ['notEmailName']);
    });

    it('ignores a local part shorter than 3 characters', () => {
      assert.deepEqual(check('joyful mountain river song', 'jo@example.com'), []);
      assert.deepEqual(check('joyful mountain river song', 'joy@example.com'), ['notEmailName']);
    });
  });

  describe('notProductName', () => {
    it('refuses a password containing the product name, in any case', () => {
      assert.deepEqual(check('My AgentExec password 2026!'), ['notProductName']);
      assert.deepEqual(check('My Agent Exec password 2026!'), []);
    });
  });

  it('accepts a good passphrase', () => {
    assert.deepEqual(check('correct horse battery staple'), []);
  });

  it('has no composition rules', () => {
    assert.deepEqual(check('qzmvtrplkwhdnbxsfgcy'), [], '20 lower-case letters');
  });

  it('reports every broken rule, in the order of passwordRules', () => {
    assert.deepEqual(check('agentexec', 'agentexec@example.com'), ['minLength', 'notEmailName', 'notProductName']);
  });

  describe('passwordHelp', () => {
    it('lists exactly the rules failedPasswordRules applies', () => {
      const bad: [string, string][] = [
        ['short', email],
        ['😀'.repeat(1025), email],
        [commonList.find((p) => codePoints(p) >= passwordLength.min)!, email],
        ['correct horse someone battery', email],
        ['my agentexec passphrase', email],
        ['agentexec', 'agentexec@example.com'],
      ];
      const returned = new Set<PasswordRuleId>(bad.flatMap(([password, address]) => check(password, address)));
      const help = passwordHelp();
      assert.deepEqual([...returned].sort(), help.rules.map((rule) => rule.id).sort());
      assert.equal(new Set(help.rules.map((rule) => rule.id)).size, help.rules.length, 'no id twice');
      for (const rule of help.rules) assert.ok(rule.text.length > 0);
    });

    it('gives the length range and copies of the rules', () => {
      const help = passwordHelp();
      assert.equal(help.minLength, 15);
      assert.equal(help.maxLength, 1024);
      assert.deepEqual(help.rules, passwordRules);
      help.rules[0]!.text = 'changed';
      help.rules.pop();
      assert.deepEqual(passwordHelp().rules, passwordRules);
      assert.equal(passwordRules[0]!.text, 'At least 15 characters.');
    });
  });
});
