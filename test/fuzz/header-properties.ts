import fc from 'fast-check';
import { fuzzBody, getPaths, isAcceptedBody, notGetMethods, notPostMethods, oddHeaders, postEndpoints } from './arbitraries.js';
import { assertKeepsContract } from './error-contract.js';
import { assertStillAlive, credentialKinds, type FuzzStack } from './fuzz-stack.js';
import { runOptions } from './run-options.js';
import { assertNothingChanges } from './state-snapshot.js';

/** Properties of the request line and headers: odd headers on every endpoint, and methods the routes do not take. */
export function describeHeaderProperties(fuzzStack: () => FuzzStack): void {
  it('answers odd, oversized and duplicated headers at every endpoint: never a 5xx, always the error body, nothing changed', async () => {
    const fuzz = fuzzStack();
    const target = fc.oneof(
      { arbitrary: fc.constantFrom(...postEndpoints).map((endpoint) => ({ method: 'POST', path: endpoint.path, body: JSON.stringify(endpoint.refusedBody()) })), weight: 5 },
      { arbitrary: fc.constantFrom(...getPaths).map((path) => ({ method: 'GET', path, body: undefined })), weight: 1 },
    );
    await assertNothingChanges(fuzz, () =>
      fc.assert(
        fc.asyncProperty(target, fc.constantFrom(...credentialKinds), oddHeaders, async ({ method, path, body }, credential, odd) => {
          const content: [string, string][] = body === undefined ? [] : [['Content-Type', 'application/json']];
          const response = await fuzz.send({ method, path, headers: [...content, ...fuzz.credentialHeaders(credential), ...odd], ...(body === undefined ? {} : { body }) });
          assertKeepsContract(response, `${method} ${path} (${credential})`);
          await assertStillAlive(fuzz);
        }),
        runOptions(300),
      ),
    );
  });

  it('answers methods a route does not take, and odd spellings of its path, without a 5xx or any change', async () => {
    const fuzz = fuzzStack();
    const onPostRoute = fc.record({
      method: fc.constantFrom(...notPostMethods) as fc.Arbitrary<string>,
      path: fc.constantFrom(...postEndpoints.map((e) => e.path)),
    });
    const onGetRoute = fc.record({ method: fc.constantFrom(...notGetMethods) as fc.Arbitrary<string>, path: fc.constantFrom(...getPaths) });
    const oddPath = fc.constantFrom(...postEndpoints).chain((endpoint) =>
      fc.record({ method: fc.constantFrom('POST', 'GET'), path: fc.constantFrom(...pathSpellings(endpoint.path)), endpoint: fc.constant(endpoint) }),
    );
    const body = fc.constantFrom('', '{}', '{"agentName":"a"}', '[[[[').map(fuzzBody);
    await assertNothingChanges(fuzz, () =>
      fc.assert(
        fc.asyncProperty(fc.oneof(onPostRoute, onGetRoute, oddPath), fc.constantFrom(...credentialKinds), body, async (target, credential, body) => {
          // An odd spelling the router still matches runs the route: only bodies it refuses are sent there.
          fc.pre(!('endpoint' in target && target.method === 'POST' && isAcceptedBody(target.endpoint, body)));
          const { method, path } = target;
          const headers: [string, string][] = [['Content-Type', 'application/json'], ...fuzz.credentialHeaders(credential)];
          const response = await fuzz.send({ method, path, headers, body: body.bytes });
          assertKeepsContract(response, `${method} ${path} (${credential})`, { bodyless: method === 'HEAD' });
          await assertStillAlive(fuzz);
        }),
        runOptions(150),
      ),
    );
  });
}

/** The same route written oddly: trailing slash, doubled slash, encoded letters, a query string, a bad escape, NUL, a dot segment. */
function pathSpellings(path: string): string[] {
  const [, area = '', name = ''] = /^\/api\/([^/]+)\/(.+)$/.exec(path) ?? [];
  return [
    `${path}/`,
    `/api//${area}/${name}`,
    `/api/${area}/%${name.charCodeAt(0).toString(16)}${name.slice(1)}`,
    `${path}?x=%ZZ&y=${'z'.repeat(2000)}`,
    `${path}%ZZ`,
    `${path}%00`,
    `/api/${area}/../${area}/${name}`,
    `${path};jsessionid=1`,
    `/api/${area}/${name.toUpperCase()}`,
  ];
}
