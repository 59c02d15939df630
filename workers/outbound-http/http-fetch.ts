import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Duplex } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { isDestinationAllowed, parseIp, type AllowRule } from './destination-guard.js';
import { fetchAgent } from './fetch-agents.js';
import { readBodyStream, type FetchBodyStream } from './fetch-body-stream.js';
import { withTraceparent } from '../tracing/traceparent-header.js';
import { onFetchAbort, type FetchAbort } from './fetch-abort.js';

/** Largest response body sys.fetch reads. */
export const maxResponseBytes = 5 * 1024 * 1024;

/** A whole response, as sys.fetch returns it (and the journal records it for replay). */
export interface FetchResult {
  status: number;
  headers: Record<string, string>;
  text: string;
}

export interface FetchRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | null;
}

export interface FetchOptions {
  allow: readonly AllowRule[];
  /** null: no timer of its own (the run's deadline ends it). */
  timeoutMs: number | null;
  /** Aborted when the run ends. */
  abort: FetchAbort;
  /** The keep-alive pool the request may use: the run's caller and rules (fetch-agents.ts). */
  pool: string;
  /** The setting `allow` comes from, named in a refusal (default AGENT_HTTP_ALLOW). */
  allowSetting?: string;
}

/** A streamed response (`stream: true`): the head at once, the body as it arrives. */
export interface FetchStreamResult {
  status: number;
  headers: Record<string, string>;
  body: FetchBodyStream;
}

/** A failed sys.fetch (network error, timeout, refused destination); the agent sees it thrown. */
export class FetchFailure extends Error {
  override name = 'FetchFailure';
}

/** The methods sys.fetch sends (DESIGN §12); CONNECT, TRACE and the rest are refused before connecting. */
export const fetchMethods: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * sys.fetch on the host. node:http rather than global fetch so that every address connected to can
 * be checked: IP-literal hosts directly, names through a guarded `lookup`. Redirects are returned,
 * not followed (a redirect could lead to a refused address). Connections are kept alive in a pool of
 * the run's caller and rules only (fetch-agents.ts): a pooled socket passed the same check.
 */
export function httpFetch(request: FetchRequest, options: FetchOptions): Promise<FetchResult> {
  return send(request, options, readWholeResponse);
}

/**
 * sys.fetch with `stream: true`: settles at the response's headers. `options.timeoutMs` bounds the
 * wait for them and then each read's wait for the next chunk; the run's end (`options.abort`) closes
 * the connection whenever it comes.
 */
export function httpFetchStream(request: FetchRequest, options: FetchOptions): Promise<FetchStreamResult> {
  return send(request, options, (req, res, done) => {
    done({
      status: res.statusCode ?? 0,
      headers: joinHeaders(res.rawHeaders),
      body: readBodyStream(req, res, { timeoutMs: options.timeoutMs, abort: options.abort, maxBytes: maxResponseBytes }),
    });
  });
}

/** Reads a response: calls `done` with what the request settles with, or `fail`. */
type ResponseReader<T> = (req: http.ClientRequest, res: IncomingMessage, done: (result: T) => void, fail: (err: Error) => void) => void;

function send<T>(request: FetchRequest, options: FetchOptions, readResponse: ResponseReader<T>): Promise<T> {
  const refused = refuseUnsendable(request);
  if (refused) return Promise.reject(refused);
  return sendRequest(new URL(request.url), request, options, readResponse).catch((err: unknown) => {
    throw fetchFailure(request, err instanceof Error ? err.message : String(err));
  });
}

/**
 * The failure for a request sys.fetch never sends (a scheme other than http: or https:, a method
 * not in fetchMethods), or null. Checked before the request waits for a slot, so it fails at once.
 */
export function refuseUnsendable(request: FetchRequest): FetchFailure | null {
  const { protocol } = new URL(request.url);
  if (protocol !== 'http:' && protocol !== 'https:') return fetchFailure(request, 'only http: and https: URLs can be fetched');
  if (!fetchMethods.includes(request.method)) {
    return fetchFailure(request, `method ${request.method} is not allowed; sys.fetch sends only ${fetchMethods.join(', ')}`);
  }
  return null;
}

export function fetchFailure(request: FetchRequest, reason: string): FetchFailure {
  return new FetchFailure(`sys.fetch ${request.method} ${request.url} failed: ${reason}`);
}

// async: what node:http throws at once (an invalid header value) becomes this fetch's failure.
async function sendRequest<T>(url: URL, request: FetchRequest, options: FetchOptions, readResponse: ResponseReader<T>): Promise<T> {
  if (options.abort.aborted) throw new Error('the run ended');
  const { hostname, port } = hostAndPort(url);
  refuseIpLiteral(options.allow, hostname, port, options.allowSetting);
  const transport = url.protocol === 'https:' ? https : http;
  const req = transport.request({
    ...destinationOf(url, hostname),
    method: request.method,
    headers: withTraceparent(withContentLength(request)),
    agent: fetchAgent(url.protocol === 'https:' ? 'https:' : 'http:', options.pool),
    lookup: guardedLookup(options.allow, port, options.allowSetting),
  });
  const response = awaitResponse(req, options, readResponse);
  req.end(request.body ?? undefined);
  return response;
}

/**
 * What node:http needs of the URL, as it would take it from the URL itself (its urlToHttpOptions) less
 * what it does not use (`href`, `hash`, `search`, `pathname`). The request's options are copied into the
 * options of its socket, kept as long as the socket: four keys fewer make that copy's table smaller
 * (with the three strings, ~1 KB less for each request a run waits on).
 */
function destinationOf(url: URL, hostname: string): http.RequestOptions {
  const auth = url.username || url.password ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined;
  return {
    protocol: url.protocol,
    hostname,
    path: `${url.pathname}${url.search}`,
    ...(url.port === '' ? {} : { port: Number(url.port) }),
    ...(auth === undefined ? {} : { auth }),
  };
}

/**
 * Settles once: with what `readResponse` makes of the response, or with the first of an error, the
 * timeout, the run's end, or anything else that ends the request without a response. Failing
 * destroys the request.
 */
function awaitResponse<T>(req: http.ClientRequest, options: FetchOptions, readResponse: ResponseReader<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let responded = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      stop();
      outcome();
    };
    const fail = (err: Error) =>
      settle(() => {
        reject(err);
        req.destroy();
      });
    const stop = watchRequest(options, fail);
    req.on('error', fail);
    // A 101 answer to an Upgrade header hands the socket over to another protocol: no 'response' ever comes.
    req.on('upgrade', (_res: IncomingMessage, socket: Duplex) => {
      socket.destroy();
      fail(new Error('the server switched protocols (101); sys.fetch reads only HTTP responses'));
    });
    req.on('response', (res: IncomingMessage) => {
      responded = true;
      readResponse(req, res, (result) => settle(() => resolve(result)), fail);
    });
    req.on('close', () => {
      if (!responded) fail(new Error('the connection closed before a response came'));
    });
  });
}

/** Fails the request on its timeout or when the run ends; returns the function that stops watching. */
function watchRequest(options: FetchOptions, fail: (err: Error) => void): () => void {
  const stopListening = onFetchAbort(options.abort, () => fail(new Error('the run ended')));
  const timeoutMs = options.timeoutMs;
  const timer = timeoutMs === null ? undefined : setTimeout(() => fail(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
  return () => {
    clearTimeout(timer);
    stopListening();
  };
}

/**
 * The body is decoded as each chunk arrives: a run waiting on a slow answer then holds the text so far,
 * not a Buffer for each chunk (an object pair in the heap and a backing store outside it: 1.7 KB a
 * run for an answer sent in 20 pieces).
 */
function readWholeResponse(_req: http.ClientRequest, res: IncomingMessage, done: (result: FetchResult) => void, fail: (err: Error) => void): void {
  const decoder = new StringDecoder('utf8');
  const texts: string[] = [];
  let size = 0;
  res.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > maxResponseBytes) fail(new Error(`response body larger than ${maxResponseBytes} bytes`));
    else texts.push(decoder.write(chunk));
  });
  res.on('error', fail);
  res.on('close', () => {
    if (!res.complete) fail(new Error('connection closed before the response ended'));
  });
  res.on('end', () =>
    done({ status: res.statusCode ?? 0, headers: joinHeaders(res.rawHeaders), text: texts.join('') + decoder.end() }),
  );
}

/** Lower-case header names; repeated headers joined with ", ". */
function joinHeaders(raw: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  return headers;
}

function withContentLength(request: FetchRequest): Record<string, string> {
  if (request.body === null) return request.headers;
  const hasLength = Object.keys(request.headers).some((name) => name.toLowerCase() === 'content-length');
  return hasLength ? request.headers : { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) };
}

/**
 * Checks `url` now as a request to it would be checked (before anything is sent): an IP literal
 * against the rules, a name through the same guarded lookup. Rejects with the refusal, or with the
 * DNS error (`code` ENOTFOUND…) of a name that does not resolve. For a destination set ahead of
 * its requests (a webhook endpoint), which are checked again each time.
 */
export async function checkDestination(url: URL, allow: readonly AllowRule[], allowSetting?: string): Promise<void> {
  const { hostname, port } = hostAndPort(url);
  refuseIpLiteral(allow, hostname, port, allowSetting);
  if (parseIp(hostname)) return;
  await new Promise<void>((resolve, reject) => {
    guardedLookup(allow, port, allowSetting)(hostname, { all: true }, (err) => (err ? reject(err) : resolve()));
  });
}

function hostAndPort(url: URL): { hostname: string; port: number } {
  return { hostname: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80) };
}

/** Node does not call `lookup` for IP literals, so those are checked before connecting. */
function refuseIpLiteral(allow: readonly AllowRule[], hostname: string, port: number, allowSetting?: string): void {
  if (parseIp(hostname) && !isDestinationAllowed(allow, { hostname, port, address: hostname })) throw refusal(allow, hostname, allowSetting);
}

/** DNS lookup that only hands out addresses the rules allow, so the socket cannot reach any other. */
function guardedLookup(allow: readonly AllowRule[], port: number, allowSetting?: string): LookupFunction {
  return (hostname, options: LookupOptions, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '');
      const allowed = addresses.filter((a) => isDestinationAllowed(allow, { hostname, port, address: a.address }));
      const first = allowed[0];
      // The host as the agent wrote it, never the addresses: those would map the internal DNS (DESIGN §12).
      if (!first) return callback(refusal(allow, hostname, allowSetting), '');
      if (options.all) return callback(null, allowed);
      callback(null, first.address, first.family);
    });
  };
}

function refusal(allow: readonly AllowRule[], what: string, allowSetting = 'AGENT_HTTP_ALLOW'): Error {
  const why = allow.length === 0 ? 'is not a public address' : `is not allowed by ${allowSetting}`;
  return new Error(`destination refused: ${what} ${why}`);
}
