import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { maxJsonDepth as maxBodyDepth } from '../../shared/storable-text.js';
import { publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { assertErrorBody } from './error-contract.js';
import type { CredentialKind, FuzzStack } from './fuzz-stack.js';
import type { RawResponse } from './raw-http.js';
import { assertNothingChanges } from './state-snapshot.js';

/** The bugs the properties found, each as a plain example. */
export function describeRegressions(fuzzStack: () => FuzzStack): void {
  const post = (path: string, body: string | Buffer, options: { credential?: CredentialKind; headers?: [string, string][] } = {}): Promise<RawResponse> => {
    const fuzz = fuzzStack();
    const headers: [string, string][] = [['Content-Type', 'application/json'], ...fuzz.credentialHeaders(options.credential ?? 'adminKey'), ...(options.headers ?? [])];
    return fuzz.send({ method: 'POST', path, headers, body });
  };
  const refused = (response: RawResponse, status: number, code: string) => {
    assert.equal(response.status, status, response.text);
    assertErrorBody(response, `${status} ${code}`);
    assert.equal((response.json as { error: { code: string } }).error.code, code);
    return (response.json as { error: { details?: { fields?: Record<string, string> } } }).error.details?.fields ?? {};
  };

  it('answers 400 for a gzip body that does not decompress, and 415 for a Content-Encoding it does not know (both were 500)', async () => {
    await assertNothingChanges(fuzzStack(), async () => {
      const garbled = await post('/api/dev/saveDraft', '{"agentName":"a","source":"","validationQuery":""}', { headers: [['Content-Encoding', 'gzip']] });
      assert.deepEqual(refused(garbled, 400, 'invalidRequest'), { '(body)': 'is not a JSON object or array' });
      const cut = await post('/api/exec/execAgent', gzipSync('{"agentName":"a"}').subarray(0, 12), { headers: [['Content-Encoding', 'gzip']] });
      refused(cut, 400, 'invalidRequest');
      for (const encoding of ['bogus', 'GZIP', 'compress']) {
        refused(await post('/api/user/getUserProfile', '{}', { headers: [['Content-Encoding', encoding]] }), 415, 'unsupportedMediaType');
      }
    });
    const zipped = await post('/api/user/getUserProfile', gzipSync('{}'), { headers: [['Content-Encoding', 'gzip']] });
    assert.equal(zipped.status, 200, 'a body that is really gzipped is read');
  });

  it(`refuses a body nested deeper than ${maxBodyDepth} levels with 400 naming where (thousands of levels were a 500) and accepts one within the limit`, async () => {
    const fuzz = fuzzStack();
    const agentName = uniqueAgentName('deep');
    await publishAgent(fuzz.stack.runtime.db, agentName, `export default async (sys) => { sys.vars.inputs = sys.inputs; sys.say('ok'); }`);
    const nested = (levels: number) => JSON.stringify({ agentName, inputs: { query: JSON.parse('['.repeat(levels) + ']'.repeat(levels)) } });
    await assertNothingChanges(fuzz, async () => {
      for (const levels of [maxBodyDepth, 5_000, 20_000]) {
        const fields = refused(await post('/api/exec/execAgent', '{"agentName":"a","inputs":{"query":' + '['.repeat(levels) + ']'.repeat(levels) + '}}'), 400, 'invalidRequest');
        assert.deepEqual(Object.values(fields), [`is nested deeper than ${maxBodyDepth} levels`]);
        assert.match(Object.keys(fields)[0]!, /^inputs\.query(\.0)+$/);
      }
    });
    const within = await post('/api/exec/execAgent', nested(maxBodyDepth - 4));
    assert.equal(within.status, 200, within.text);
    assert.equal((within.json as { resultCode: string }).resultCode, 'success');
  });

  it('refuses U+0000 and unpaired surrogates in any string or field name with 400 naming the field (NUL in a draft was a 500, in inputs it ended the run unexpected)', async () => {
    await assertNothingChanges(fuzzStack(), async () => {
      const nul = refused(await post('/api/dev/saveDraft', '{"agentName":"a","source":"x\\u0000","validationQuery":""}'), 400, 'invalidRequest');
      assert.deepEqual(nul, { source: 'must not contain U+0000 or unpaired surrogates' });
      const lone = refused(await post('/api/exec/execAgent', '{"agentName":"a","inputs":{"query":"\\ud800"}}'), 400, 'invalidRequest');
      assert.deepEqual(lone, { 'inputs.query': 'must not contain U+0000 or unpaired surrogates' });
      const reversed = refused(await post('/api/dev/saveDraft', '{"agentName":"a","source":"","validationQuery":"\\udc00\\ud800"}'), 400, 'invalidRequest');
      assert.deepEqual(Object.keys(reversed), ['validationQuery']);
      const key = refused(await post('/api/exec/execAgent', '{"agentName":"a","inputs":{"a\\u0000":"x"}}'), 400, 'invalidRequest');
      assert.deepEqual(key, { inputs: 'has a field name with U+0000 or unpaired surrogates' });
      const password = refused(await post('/api/auth/login', '{"email":"nobody@example.test","password":"a\\u0000"}', { credential: 'signedOut' }), 400, 'invalidRequest');
      assert.deepEqual(Object.keys(password), ['password']);
    });
    const paired = await post('/api/dev/saveDraft', JSON.stringify({ agentName: uniqueAgentName('emoji'), source: 'export default async (sys) => sys.say("😀 \\u202e")', validationQuery: '👨‍👩‍👧 \ud83d\ude00' }));
    assert.equal(paired.status, 200, 'surrogate pairs, emoji and bidi marks are fine');
  });

  it('names what is wrong in details.fields for a body that is not JSON and for a call with both credentials (both had no details)', async () => {
    const fuzz = fuzzStack();
    await assertNothingChanges(fuzz, async () => {
      for (const body of ['{"agentName":', '"just a string"', '12']) {
        assert.deepEqual(refused(await post('/api/exec/execAgent', body), 400, 'invalidRequest'), { '(body)': 'is not a JSON object or array' });
      }
      const both = await post('/api/conv/list', '{}', { headers: fuzz.credentialHeaders('cookie') });
      assert.deepEqual(Object.keys(refused(both, 400, 'invalidRequest')).sort(), ['Authorization', 'Cookie']);
    });
  });

  it('reads the body under every spelling of application/json it lets through (with `application/json;` the body was skipped: a logout with any body signed out)', async () => {
    const fuzz = fuzzStack();
    await assertNothingChanges(fuzz, async () => {
      for (const type of ['application/json;', 'application/json; charset', 'application/json;;;', 'application/json\t']) {
        const logout = await fuzz.send({ method: 'POST', path: '/api/auth/logout', headers: [['Content-Type', type], ...fuzz.credentialHeaders('cookie')], body: '{"everywhere":true}' });
        assert.deepEqual(refused(logout, 400, 'invalidRequest'), { everywhere: 'is not a known field' }, type);
        const broken = await fuzz.send({ method: 'POST', path: '/api/user/getUserProfile', headers: [['Content-Type', type], ...fuzz.credentialHeaders('userKey')], body: '[[' });
        refused(broken, 400, 'invalidRequest');
      }
    });
  });
}
