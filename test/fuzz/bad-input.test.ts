import assert from 'node:assert/strict';
import { describeBodyProperties } from './body-properties.js';
import { startFuzzStack, type FuzzStack } from './fuzz-stack.js';
import { describeHeaderProperties } from './header-properties.js';
import { describeRegressions } from './regressions.js';

/**
 * Issue 7: random and malformed bodies, headers, methods and paths at every endpoint, with every kind of
 * credential, against one real stack. Never a 5xx or a crash, always the error body of DESIGN §2, and a
 * refused request changes no row. The properties live beside this file; this suite runs them.
 */
describe('bad input at every endpoint (random, malformed, huge, deep, odd Unicode, wrong types)', function () {
  this.timeout(120_000);
  let fuzz: FuzzStack;

  before(async () => {
    fuzz = await startFuzzStack();
  });
  after(() => fuzz.close());

  afterEach(async () => {
    // The cookie credential must have stayed signed in, or the cookie cases tested only the 401.
    const profile = await fuzz.send({ method: 'POST', path: '/api/user/getUserProfile', headers: [['Content-Type', 'application/json'], ...fuzz.credentialHeaders('cookie')], body: '{}' });
    assert.equal(profile.status, 200, 'the fuzz session still lives');
  });

  describe('properties of bodies', () => describeBodyProperties(() => fuzz));
  describe('properties of headers, methods and paths', () => describeHeaderProperties(() => fuzz));
  describe('regressions', () => describeRegressions(() => fuzz));
});
