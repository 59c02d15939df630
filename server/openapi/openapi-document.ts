import { roles } from '../../shared/api.js';
import { errorStatus, type ErrorCode } from '../../shared/errors.js';
import { endpoints, type Access, type Endpoint, type RequestHeader } from './endpoints.js';
import { componentRef, createSchemaConverter, mergeComponents, type JsonSchema, type SchemaConverter } from './json-schemas.js';
import { namedRequestSchemas, namedResponseSchemas } from './named-schemas.js';
import { streamEvents } from './stream-events.js';

export interface OpenApiDocument {
  openapi: string;
  jsonSchemaDialect: string;
  servers: { url: string; description: string }[];
  info: { title: string; version: string; description: string; license: { name: string; url: string } };
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, unknown>; parameters: Record<string, unknown> };
}

const bearerKey = 'bearerKey';
const sessionCookie = 'sessionCookie';

/**
 * The OpenAPI 3.1 document of the API (/api/openapi.json), generated from the endpoint catalogue and the
 * zod schemas the server validates with and answers by. `sessionCookieName` is this server's (its name
 * depends on COOKIE_SECURE). Building converts every schema: build once and keep the result.
 */
export function buildOpenApiDocument(options: { version: string; sessionCookieName: string }): OpenApiDocument {
  const requests = createSchemaConverter(namedRequestSchemas, 'input');
  const responses = createSchemaConverter(namedResponseSchemas, 'output');
  const schemas = requests.components();
  mergeComponents(schemas, responses.components());
  schemas.StreamEvent = streamEventSchema(responses);
  const paths: OpenApiDocument['paths'] = {};
  for (const endpoint of endpoints) (paths[endpoint.path] ??= {})[endpoint.method] = operation(endpoint, requests, responses);
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    servers: [{ url: '/', description: 'The server that answers this document.' }],
    info: {
      title: 'agentexec',
      license: { name: 'UNLICENSED', url: 'https://docs.npmjs.com/cli/configuring-npm/package-json#license' },
      version: options.version,
      description:
        'Runs named agents on request and keeps the conversations they run in. Every API call is a POST with a JSON body; errors outside an execution result are `{error:{code,message,details?}}` with the status of their code. Every response carries X-Request-Id (the one sent, when it is 1-128 of A-Za-z0-9._:-).',
    },
    paths,
    components: {
      schemas,
      securitySchemes: {
        [bearerKey]: { type: 'http', scheme: 'bearer', description: 'A service-account key, `ak_<keyid>_<secret>`.' },
        [sessionCookie]: {
          type: 'apiKey',
          in: 'cookie',
          name: options.sessionCookieName,
          description: 'The session a login sets (`__Host-agentexec_session`, or `agentexec_session` with COOKIE_SECURE=false). A POST with it must come from the server’s own origin, as JSON.',
        },
      },
      parameters: requestHeaderParameters,
    },
  };
}

function operation(endpoint: Endpoint, requests: SchemaConverter, responses: SchemaConverter): Record<string, unknown> {
  return {
    operationId: endpoint.operationId ?? endpoint.path.split('/').at(-1),
    summary: endpoint.summary,
    description: [endpoint.description, accessNote(endpoint.access)].filter(Boolean).join('\n\n'),
    tags: [tagOf(endpoint.path)],
    security: securityOf(endpoint.access),
    parameters: (endpoint.headers ?? []).map((header) => ({ $ref: `#/components/parameters/${header}` })),
    ...(endpoint.request ? { requestBody: { required: true, content: { 'application/json': { schema: requests.convert(endpoint.request) } } } } : {}),
    responses: { ...successResponses(endpoint, responses), ...errorResponses(endpoint) },
  };
}

function tagOf(path: string): string {
  const [, first, area] = path.split('/');
  return first === 'api' && area !== 'openapi.json' ? area! : 'operations';
}

function accessNote(access: Access): string {
  if (access.kind === 'anyone') return 'No credential.';
  if (access.kind === 'sameOrigin') return 'No credential. A browser call from the server’s own origin (or ALLOWED_ORIGINS), as JSON; anything else is 403.';
  const who = roles.every((role) => access.roles.includes(role)) ? 'any caller' : `a caller with role ${access.roles.join(' or ')}`;
  return `A bearer key or a session cookie (not both) of ${who}.`;
}

/** OpenAPI 3.1 lets the list of a non-OAuth scheme name the roles it needs; empty when any role will do. */
function securityOf(access: Access): Record<string, string[]>[] {
  if (access.kind !== 'credential') return [];
  const needed = roles.every((role) => access.roles.includes(role)) ? [] : [...access.roles];
  return [{ [bearerKey]: needed }, { [sessionCookie]: needed }];
}

function successResponses(endpoint: Endpoint, responses: SchemaConverter): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  if (endpoint.response) content['application/json'] = { schema: responses.convert(endpoint.response) };
  // The stream is text to an OpenAPI 3.1 tool (a schema there describes the whole body); its events are
  // described by components.schemas.StreamEvent, which `x-stream-event` names.
  if (endpoint.events) {
    content['text/event-stream'] = {
      schema: { type: 'string', description: 'Server-sent events: each `id:`, `event:` and one `data:` line of JSON (see StreamEvent), then a blank line.' },
      'x-stream-event': { $ref: componentRef('StreamEvent') },
    };
  }
  if (endpoint.otherContent) content[endpoint.otherContent.mediaType] = { schema: { description: endpoint.otherContent.description } };
  const streamed = endpoint.events === 'whenStreamTrue' ? ' A server-sent event stream when the body has `stream: true`.' : '';
  const ok = {
    description: endpoint.status === 202 ? 'Accepted: queued, not run yet.' : `OK.${streamed}`,
    ...(endpoint.events ? { headers: { 'X-Run-Id': { description: 'The run a stream relays.', schema: { type: 'string' } } } } : {}),
    content,
  };
  const status = String(endpoint.status ?? 200);
  const same = Object.fromEntries((endpoint.responseAlsoWith ?? []).map((also) => [String(also), { description: `See ${status}.`, content }]));
  return { [status]: ok, ...same };
}

/** The codes every endpoint can answer, by what it is; the catalogue lists only an endpoint's own. */
function errorCodesOf(endpoint: Endpoint): ErrorCode[] {
  const codes = new Set<ErrorCode>(['internal', ...(endpoint.errors ?? [])]);
  if (endpoint.method === 'post') for (const code of ['invalidRequest', 'payloadTooLarge', 'unsupportedMediaType'] as const) codes.add(code);
  if (endpoint.access.kind === 'sameOrigin') codes.add('forbidden');
  // Authentication reads the credential from the database; 400 when both are sent; 403 for a foreign origin or role.
  if (endpoint.access.kind === 'credential') for (const code of ['invalidRequest', 'unauthenticated', 'forbidden', 'unavailable'] as const) codes.add(code);
  return [...codes];
}

function errorResponses(endpoint: Endpoint): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodesOf(endpoint)) byStatus.set(errorStatus[code], [...(byStatus.get(errorStatus[code]) ?? []), code]);
  const sorted = [...byStatus].sort(([a], [b]) => a - b);
  return Object.fromEntries(sorted.map(([status, codes]) => [String(status), errorResponse(status, codes, endpoint.path.startsWith('/api/exec/'))]));
}

function errorResponse(status: number, codes: ErrorCode[], startsRuns: boolean): Record<string, unknown> {
  const retryAfterHeader = { 'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer' } } };
  // A refusal by a limit per caller (DESIGN §16) also names the limits, as the IETF draft "RateLimit header fields for HTTP" does.
  const rateLimitHeaders = startsRuns && codes.includes('rateLimited')
    ? {
        'RateLimit-Policy': { description: 'The limits per caller that apply, e.g. `"minute";q=60;w=60, "inflight";q=5000;qu="concurrent-requests"` (sent with every answer when a per-minute limit applies).', schema: { type: 'string' } },
        RateLimit: { description: 'What is left of each limit and in how many seconds it resets, e.g. `"minute";r=0;t=12`.', schema: { type: 'string' } },
      }
    : {};
  const retryAfter = status === 429 || status === 503 ? { headers: { ...retryAfterHeader, ...(status === 429 ? rateLimitHeaders : {}) } } : {};
  // The error body, with `code` narrowed to the codes this endpoint answers with this status.
  const schema = { $ref: componentRef('ErrorBody'), type: 'object', properties: { error: { type: 'object', properties: { code: { enum: codes } } } } };
  return { description: codes.join(', '), ...retryAfter, content: { 'application/json': { schema } } };
}

/**
 * One event of a stream, modelled as OpenAPI 3.2 models an SSE event for `itemSchema` (3.1 has no way
 * to say "each item"): the `event`, `id` and `data` fields, `data` being JSON of the event's schema.
 */
function streamEventSchema(responses: SchemaConverter): JsonSchema {
  return {
    description: `One event of a server-sent event stream (\`event:\`, \`id:\` and one \`data:\` line of JSON, then a blank line); \`: keep-alive\` comments come every 15 s. Clients ignore events they do not know. The events: ${streamEvents.map((e) => e.name).join(', ')}.`,
    oneOf: streamEvents.map((event) => ({
      type: 'object',
      description: event.description,
      properties: {
        event: { const: event.name },
        id: { type: 'string', description: '1, 2, …: send the last one as Last-Event-ID to /api/exec/attach.' },
        data: { type: 'string', contentMediaType: 'application/json', contentSchema: responses.convert(event.data) },
      },
      required: ['event', 'id', 'data'],
    })),
  };
}

const requestHeaderParameters: Record<RequestHeader, unknown> = {
  'Idempotency-Key': {
    name: 'Idempotency-Key',
    in: 'header',
    description: 'A retry with the same key within 24 h does not run again: it gets the first call’s response, or joins its stream. The same key with a different request is 400.',
    schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' },
  },
  'Last-Event-ID': {
    name: 'Last-Event-ID',
    in: 'header',
    description: 'The id of the last event received; only later events are sent.',
    schema: { type: 'string', pattern: '^\\d{1,15}$' },
  },
};
