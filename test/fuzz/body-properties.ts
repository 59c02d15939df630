import fc from 'fast-check';
import { publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { contentHeaders, fuzzBody, isAcceptedBody, malformedBody, oddString, postEndpoints, type FuzzBody } from './arbitraries.js';
import { assertKeepsContract } from './error-contract.js';
import { assertStillAlive, credentialKinds, type FuzzStack } from './fuzz-stack.js';
import { runOptions } from './run-options.js';
import { assertNothingChanges } from './state-snapshot.js';

/** Properties of request bodies: malformed ones at every endpoint, and odd values in well-typed ones. */
export function describeBodyProperties(fuzzStack: () => FuzzStack): void {
  it('refuses malformed bodies at every endpoint with every kind of credential: never a 5xx, always the error body, nothing changed', async () => {
    const fuzz = fuzzStack();
    const request = fc.constantFrom(...postEndpoints).chain((endpoint) =>
      fc.record({
        endpoint: fc.constant(endpoint),
        credential: fc.constantFrom(...credentialKinds),
        content: contentHeaders,
        framing: fc.constantFrom('length', 'length', 'chunked') as fc.Arbitrary<'length' | 'chunked'>,
        body: malformedBody(endpoint),
      }),
    );
    await assertNothingChanges(fuzz, () =>
      fc.assert(
        fc.asyncProperty(request, async ({ endpoint, credential, content, framing, body }) => {
          fc.pre(!isAcceptedBody(endpoint, body));
          const headers = [...content, ...fuzz.credentialHeaders(credential)];
          const response = await fuzz.send({ method: 'POST', path: endpoint.path, headers, body: body.bytes, framing });
          assertKeepsContract(response, `POST ${endpoint.path} (${credential})`);
          await assertStillAlive(fuzz);
        }),
        runOptions(300),
      ),
    );
  });

  it('answers well-typed bodies holding odd Unicode and extreme values without a 5xx, through a real run', async () => {
    const fuzz = fuzzStack();
    const echo = uniqueAgentName('echo');
    await publishAgent(fuzz.stack.runtime.db, echo, `export default async (sys) => { sys.vars.seen = sys.inputs; sys.conv.last = sys.query ?? null; sys.say(String(sys.query)); }`);
    const wellTyped = fc.oneof(
      fc.record({ agentName: fc.constant(echo), inputs: oddInputs, stream: fc.boolean() }).map((body) => call('/api/exec/execAgent', body)),
      fc.record({ agentName: fc.constant(echo), source: oddString, validationQuery: oddString }).map((body) => call('/api/dev/saveDraft', body)),
      oddString.map((odd) => call('/api/dev/saveDraft', { agentName: echo, source: echoing(odd), validationQuery: 'echo' }, { validate: true })),
      fc.record({ limit: fc.integer({ min: 1, max: 200 }), before: oddDate }, { requiredKeys: [] }).map((body) => call('/api/conv/list', body)),
      fc.record({ since: oddDate, until: oddDate }, { requiredKeys: [] }).map((body) => call('/api/admin/usageReport', body)),
      fc.record({ since: oddDate, until: oddDate }, { requiredKeys: [] }).map((body) => call('/api/admin/errorReport', body)),
      fc.record({ convid: fc.uuid(), pinned: fc.boolean() }).map((body) => call('/api/conv/pin', body)),
      fc.oneof(fc.record({ convid: fc.uuid() }), fc.record({ requestId: fc.stringMatching(/^[A-Za-z0-9._:-]{1,128}$/) })).map((body) => call('/api/exec/cancel', body)),
      oddString.map((password) => call('/api/auth/createPasswordWithEmailCode', { email: 'nobody-fuzz@example.test', code: '123456', password })),
    );
    await fc.assert(
      fc.asyncProperty(wellTyped, fc.constantFrom('adminKey', 'cookie') as fc.Arbitrary<'adminKey' | 'cookie'>, async (request, credential) => {
        const headers: [string, string][] = [['Content-Type', 'application/json'], ...fuzz.credentialHeaders(credential)];
        const response = await fuzz.send({ method: 'POST', path: request.path, headers, body: request.body.bytes });
        assertKeepsContract(response, `POST ${request.path} (${credential})`);
        if (request.validate && response.status === 200) {
          const { draftid } = response.json as { draftid: string };
          const run = await fuzz.send({ method: 'POST', path: '/api/dev/validateDraftStream', headers, body: JSON.stringify({ draftid, stream: request.body.bytes.length % 2 === 0 }) });
          assertKeepsContract(run, `POST /api/dev/validateDraftStream (${credential})`);
        }
        await assertStillAlive(fuzz);
      }),
      runOptions(150),
    );
  });
}

interface WellTypedCall {
  path: string;
  body: FuzzBody;
  /** Validate the draft the call saved. */
  validate: boolean;
}

function call(path: string, body: unknown, options: { validate?: boolean } = {}): WellTypedCall {
  return { path, body: fuzzBody(JSON.stringify(body)), validate: options.validate ?? false };
}

/** A draft that says, keeps and logs the odd string: it reaches the sandbox, the trace, the stored response and the variables. */
function echoing(odd: string): string {
  const literal = JSON.stringify(odd);
  return `export default async (sys) => { sys.log(${literal}); sys.vars[${literal}] = ${literal}; sys.say(${literal}); sys.html(${literal}); }`;
}

/** Inputs whose names and values are odd strings, the query among them. */
const oddInputs = fc.record({ query: oddString, named: fc.dictionary(oddString, fc.oneof(oddString, fc.array(oddString, { maxLength: 3 })), { maxKeys: 3 }) }).map(({ query, named }) => ({ ...named, query }));

/** ISO date-times the schema accepts, from year 0 to 9999, with any offset and any number of fractional digits. */
const oddDate: fc.Arbitrary<string> = fc
  .record({
    date: fc.date({ min: new Date('0000-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }),
    offsetMinutes: fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
    fractionDigits: fc.nat({ max: 15 }),
  })
  .map(({ date, offsetMinutes, fractionDigits }) => {
    const fraction = fractionDigits ? `.${'9'.repeat(fractionDigits)}` : '';
    if (offsetMinutes === 0) return `${date.toISOString().slice(0, 19)}${fraction}Z`;
    const sign = offsetMinutes < 0 ? '-' : '+';
    const abs = Math.abs(offsetMinutes);
    return `${date.toISOString().slice(0, 19)}${fraction}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  });
