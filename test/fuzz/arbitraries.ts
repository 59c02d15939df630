import fc from 'fast-check';
import type { z } from 'zod';
import { loginBody, createPasswordBody, emailCodeBody, emptyBody } from '../../server/auth/auth.schemas.js';
import { reportBody } from '../../server/admin/admin.schemas.js';
import { setRoleBody } from '../../server/admin/accounts.schemas.js';
import { listDeliveriesBody, redeliverBody } from '../../server/admin/webhook-log.schemas.js';
import { listBody, pinBody } from '../../server/conv/conv.schemas.js';
import { draftBody, listAgentsBody, saveDraftBody, validateDraftBody } from '../../server/dev/dev.schemas.js';
import { attachBody, cancelBody, execAgentBody } from '../../server/exec/exec.schemas.js';
import { fuzzBodyLimit, unknownId } from './fuzz-stack.js';

/** A POST endpoint: the schema its body is checked with, its fields, and a body it refuses or answers without changing anything. */
export interface PostEndpoint {
  path: string;
  schema: z.ZodType;
  fields: string[];
  refusedBody(): unknown;
}

const nobody = 'nobody-fuzz@example.test';

export const postEndpoints: readonly PostEndpoint[] = ([
  { path: '/api/auth/login', schema: loginBody, fields: ['email', 'password'], refusedBody: () => ({ email: nobody }) },
  { path: '/api/auth/logout', schema: emptyBody, fields: [], refusedBody: () => ({ everywhere: true }) },
  { path: '/api/auth/emailCode', schema: emailCodeBody, fields: ['email'], refusedBody: () => ({ email: 'not an address' }) },
  { path: '/api/auth/createPasswordWithEmailCode', schema: createPasswordBody, fields: ['email', 'code', 'password'], refusedBody: () => ({ email: nobody, code: '12345', password: 'x' }) },
  { path: '/api/auth/getPasswordHelp', schema: emptyBody, fields: [], refusedBody: () => ({}) },
  { path: '/api/user/getUserProfile', schema: emptyBody, fields: [], refusedBody: () => ({}) },
  { path: '/api/exec/execAgent', schema: execAgentBody, fields: ['agentName', 'inputs', 'convid', 'stream'], refusedBody: () => ({ agentName: 'no-such-agent-fuzz' }) },
  { path: '/api/exec/cancel', schema: cancelBody, fields: ['convid', 'requestId'], refusedBody: () => ({ requestId: 'no-such-request' }) },
  { path: '/api/exec/attach', schema: attachBody, fields: ['convid'], refusedBody: () => ({ convid: unknownId() }) },
  { path: '/api/conv/pin', schema: pinBody, fields: ['convid', 'pinned'], refusedBody: () => ({ convid: unknownId(), pinned: true }) },
  { path: '/api/conv/list', schema: listBody, fields: ['limit', 'before'], refusedBody: () => ({}) },
  { path: '/api/dev/saveDraft', schema: saveDraftBody, fields: ['draftid', 'agentName', 'source', 'validationQuery'], refusedBody: () => ({ agentName: '-', source: '', validationQuery: '' }) },
  { path: '/api/dev/getDraft', schema: draftBody, fields: ['draftid'], refusedBody: () => ({ draftid: unknownId() }) },
  { path: '/api/dev/publishDraft', schema: draftBody, fields: ['draftid'], refusedBody: () => ({ draftid: unknownId() }) },
  { path: '/api/dev/listAgents', schema: listAgentsBody, fields: [], refusedBody: () => ({}) },
  { path: '/api/dev/validateDraftStream', schema: validateDraftBody, fields: ['draftid', 'inputs', 'convid', 'stream'], refusedBody: () => ({ draftid: unknownId() }) },
  { path: '/api/admin/usageReport', schema: reportBody, fields: ['since', 'until'], refusedBody: () => ({}) },
  { path: '/api/admin/errorReport', schema: reportBody, fields: ['since', 'until'], refusedBody: () => ({}) },
  { path: '/api/admin/listAccounts', schema: emptyBody, fields: [], refusedBody: () => ({}) },
  { path: '/api/admin/setRole', schema: setRoleBody, fields: ['name', 'email', 'role'], refusedBody: () => ({ name: 'nobody-fuzz', role: 'user' }) },
  { path: '/api/admin/listWebhookDeliveries', schema: listDeliveriesBody, fields: ['name', 'status', 'cursor', 'limit'], refusedBody: () => ({ name: 'nobody-fuzz' }) },
  { path: '/api/admin/redeliverWebhook', schema: redeliverBody, fields: ['webhookId'], refusedBody: () => ({ webhookId: unknownId() }) },
] as PostEndpoint[]).map((endpoint) => Object.assign(endpoint, { [fc.toStringMethod]: () => endpoint.path }));

export const getPaths = ['/healthz', '/readyz', '/metrics', '/api/openapi.json'] as const;

/** A request body; printed short when fast-check reports a counterexample (some are hundreds of kilobytes). */
export interface FuzzBody {
  bytes: Buffer;
  [fc.toStringMethod](): string;
}

export function fuzzBody(content: string | Buffer): FuzzBody {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  return {
    bytes,
    [fc.toStringMethod]: () => {
      const text = bytes.toString('utf8');
      return bytes.length <= 300 ? JSON.stringify(text) : `${JSON.stringify(text.slice(0, 120))}…(${bytes.length} bytes)…${JSON.stringify(text.slice(-60))}`;
    },
  };
}

/** True when the body is JSON its endpoint would accept (such a body may rightly change state), read as the server reads it: UTF-8, a leading BOM ignored. */
export function isAcceptedBody(endpoint: PostEndpoint, body: FuzzBody): boolean {
  const text = body.bytes.toString('utf8').replace(/^\ufeff/, '');
  try {
    return endpoint.schema.safeParse(text === '' ? {} : JSON.parse(text)).success;
  } catch {
    // Not JSON, or nested deep enough to overflow the schema's recursion (the server refuses it before its schema sees it).
    return false;
  }
}

/** Strings people do not expect: lone surrogates (JSON.stringify writes them as \ud800), NUL, bidi marks, emoji, combining marks, line separators. */
const oddPieces = [
  '\ud800', '\udfff', '\ud83d', '\u0000', '\u0001', '\u007f', '\u202e', '\u200f', '\u200b', '\ufeff', '\uffff', '\ufffe',
  '😀', '👨‍👩‍👧', 'e\u0301', 'ǅ', 'Ａ', '\u0085', '\u2028', '\u2029', '\r\n', '"', '\\', '%00', '../', '<script>', "' or 1=1 --", '\u{10ffff}', '\u{e0001}',
];

export const oddString: fc.Arbitrary<string> = fc
  .array(fc.oneof(fc.constantFrom(...oddPieces), fc.string({ unit: 'binary', maxLength: 8 }), fc.string({ maxLength: 8 })), { maxLength: 12 })
  .map((pieces) => pieces.join(''));

/** Agent names just past the rules: too long, not starting with a letter, letters outside ASCII. */
const overlongAgentName: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: 65, max: 2000 }).map((n) => 'a'.repeat(n)),
  fc.constantFrom('9lives', '-dash', '_under', 'é', 'agent\u202egnp', 'agent\u0000', 'a b', 'a.b', 'ａｇｅｎｔ', '😀', ''),
  oddString.map((s) => `a${s}`),
);

/** JSON values of every type (for a field that wants another). */
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  oddString,
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(-0, 2 ** 53 + 1, Number.MAX_VALUE, [], {}, ''),
);

/** An object of the endpoint's fields and others, with values of any type. */
function wrongFields(endpoint: PostEndpoint): fc.Arbitrary<string> {
  const key = endpoint.fields.length ? fc.oneof(fc.constantFrom(...endpoint.fields), oddString, fc.constantFrom('__proto__', 'constructor', 'toString')) : oddString;
  return fc.dictionary(key, anyJson, { maxKeys: 6 }).map((body) => JSON.stringify(body));
}

/** A body that would be right but for its agent name (for the endpoints that take one; others get the unknown field). */
function misnamedAgent(endpoint: PostEndpoint): fc.Arbitrary<string> {
  const rest = endpoint.fields.includes('source') ? { source: 'export default async () => {}', validationQuery: '' } : {};
  return overlongAgentName.map((agentName) => JSON.stringify({ ...rest, agentName }));
}

/** Text that is not JSON, or not an object. */
const notJsonObject: fc.Arbitrary<string> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }).filter((v) => typeof v !== 'object' || v === null).map((v) => JSON.stringify(v)),
  fc.string(),
  fc.json().chain((text) => fc.nat({ max: Math.max(0, text.length - 1) }).map((cut) => text.slice(0, cut))),
  fc.constantFrom(
    '{', '}', '{"a":}', '{"a":1,}', "{'a':1}", '{"a":1}{"b":2}', 'NaN', 'undefined', '\ufeff{}', '{"a":1e999}', '{"limit":1e999}', '{"limit":-0}',
    '{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"x":1}}}', '[]', '[{}]', 'null', '"{}"', '{"a":"\\ud800"', '{"a":"\\x41"}', '{"a":"\\u12"}',
    '{"a":01}', '{"a":.5}', '{"a":+1}', '{"a":true false}', '{"a" 1}', '\u0000{}', '{}\u0000',
  ),
);

/** Nesting thousands of levels deep, written out as text (closed or not), alone or inside a field. */
const deepNesting: fc.Arbitrary<string> = fc
  .record({ depth: fc.integer({ min: 100, max: 12_000 }), shape: fc.constantFrom('array', 'object', 'open'), field: fc.constantFrom(null, 'inputs', 'agentName', 'convid', 'since', 'email') })
  .map(({ depth, shape, field }) => {
    const deep = shape === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : shape === 'object' ? '{"a":'.repeat(depth) + '1' + '}'.repeat(depth) : '['.repeat(depth);
    if (field === null) return deep;
    return field === 'inputs' ? `{"agentName":"a","inputs":{"query":${deep}}}` : `{"${field}":${deep}}`;
  });

/** Bodies a little under, at and over the body limit, and far over it, of one- to four-byte characters. */
const hugeBody: fc.Arbitrary<string> = fc
  .record({
    size: fc.oneof(fc.integer({ min: fuzzBodyLimit - 64, max: fuzzBodyLimit + 64 }), fc.integer({ min: fuzzBodyLimit, max: 4 * fuzzBodyLimit })),
    filler: fc.constantFrom('x', 'é', '€', '😀', '\\u0000', '\\ud800'),
    field: fc.constantFrom('agentName', 'source', 'email', 'password', 'query', 'convid'),
  })
  .map(({ size, filler, field }) => {
    const head = `{"${field}":"`;
    const fillerBytes = Buffer.byteLength(filler);
    return head + filler.repeat(Math.max(0, Math.floor((size - head.length - 2) / fillerBytes))) + '"}';
  });

/** Bytes that are not UTF-8 (a stray continuation byte, an overlong NUL, an encoded surrogate, a truncated sequence). */
const notUtf8: fc.Arbitrary<Buffer> = fc
  .constantFrom([0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xfe, 0xff])
  .map((bytes) => Buffer.concat([Buffer.from('{"agentName":"a'), Buffer.from(bytes), Buffer.from('","email":"x'), Buffer.from(bytes), Buffer.from('"}')]));

/** A body the endpoint should refuse: wrong types, missing or extra fields, not JSON, too deep, too big, odd bytes. */
export function malformedBody(endpoint: PostEndpoint): fc.Arbitrary<FuzzBody> {
  const bodies: fc.Arbitrary<string | Buffer> = fc.oneof(
    { arbitrary: wrongFields(endpoint), weight: 4 },
    { arbitrary: misnamedAgent(endpoint), weight: 1 },
    { arbitrary: notJsonObject, weight: 3 },
    { arbitrary: deepNesting, weight: 1 },
    { arbitrary: hugeBody, weight: 1 },
    { arbitrary: notUtf8, weight: 1 },
  );
  return bodies.map(fuzzBody);
}

/** How the body is described: JSON in all its spellings (most of the time), and other types, charsets and encodings. */
export const contentHeaders: fc.Arbitrary<[string, string][]> = fc.oneof(
  { arbitrary: fc.constant<[string, string][]>([['Content-Type', 'application/json']]), weight: 6 },
  {
    arbitrary: fc
      .constantFrom(
        'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json; charset=latin1', 'application/json; charset=utf-16', 'application/json; charset=bogus',
        'application/json;;;', 'application/json, text/plain', 'application/vnd.api+json', 'text/plain', 'text/json', 'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x', '', ';', 'application/', '*/*', 'application/json\u0000',
      )
      .map((type): [string, string][] => [['Content-Type', type]]),
    weight: 2,
  },
  {
    arbitrary: fc
      .constantFrom('gzip', 'deflate', 'br', 'identity', 'GZIP', 'compress', 'bogus', 'gzip, gzip', '')
      .map((encoding): [string, string][] => [['Content-Type', 'application/json'], ['Content-Encoding', encoding]]),
    weight: 2,
  },
);

/** A header value as a client would put it on the wire: UTF-8 bytes, no line break (that would start another header). */
const onWire = (value: string): string => Buffer.from(value.replace(/\n/g, '\u000b'), 'utf8').toString('latin1');
const garbage = oddString.map(onWire);

const header = (name: string, values: fc.Arbitrary<string>): fc.Arbitrary<[string, string]> => values.map((value): [string, string] => [name, value]);

/** One odd header: a broken credential, an id that is not one, a foreign origin, or a random name and value. */
const oddHeader: fc.Arbitrary<[string, string]> = fc.oneof(
  header('Authorization', fc.constantFrom('Bearer', 'Bearer ', 'bearer ak_', 'Bearer ak__', 'Bearer ak_x_y_z', `Bearer ak_0123456789abcdef_${'A'.repeat(43)}`, 'Basic dXNlcjpwYXNz', 'Token abc', 'Bearer  \t ak_a_b', ' ')),
  header('Authorization', fc.integer({ min: 1_000, max: 20_000 }).map((n) => `Bearer ak_${'A'.repeat(n)}`)),
  header('Authorization', garbage.map((g) => `Bearer ${g}`)),
  header('Cookie', fc.oneof(garbage.map((g) => `agentexec_session=${g}`), fc.constantFrom('agentexec_session=a.b.c', 'agentexec_session="', 'agentexec_session=%ZZ', ';;;=', 'agentexec_session=; agentexec_session=x', '=', `agentexec_session=${'x'.repeat(8000)}`))),
  header('Last-Event-ID', fc.oneof(garbage, fc.constantFrom('-1', '1e3', '99999999999999999999', 'abc', ' 1', '0x10', '1.5', '١٢'))),
  header('Idempotency-Key', fc.oneof(garbage, fc.constantFrom('a'.repeat(129), 'key with space', 'ключ', '*', '\t'))),
  header('X-Request-Id', fc.oneof(garbage, fc.constantFrom('\u0001\u0002', 'id\r', 'id\u007f', 'a'.repeat(129), 'a'.repeat(10_000), '../../etc/passwd'))),
  header('Origin', fc.oneof(garbage, fc.constantFrom('null', 'https://evil.example', 'http://127.0.0.1', 'http://[::1'))),
  header('Sec-Fetch-Site', fc.oneof(garbage, fc.constantFrom('cross-site', 'same-site', 'none', 'SAME-ORIGIN'))),
  header('Content-Length', fc.constantFrom('-1', 'abc', '1e3')),
  header('Transfer-Encoding', fc.constantFrom('chunked, gzip', 'identity', 'bogus')),
  fc.tuple(fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,30}$/), garbage),
);

/** A few odd headers, sometimes the same one twice. */
export const oddHeaders: fc.Arbitrary<[string, string][]> = fc.oneof(
  fc.array(oddHeader, { minLength: 1, maxLength: 4 }),
  oddHeader.chain(([name, value]) => oddHeader.map(([, other]): [string, string][] => [[name, value], [name, other]])),
);

/** Methods a POST route does not answer, and methods a GET route does not answer. */
export const notPostMethods = ['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'PROPFIND', 'FOO'] as const;
export const notGetMethods = ['POST', 'PUT', 'DELETE', 'PATCH'] as const;
