import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isDestinationAllowed, parseIp, type AllowRule } from './destination-guard.js';
import type { FetchResult } from './sandbox.types.js';

/** Largest response body sys.fetch reads. */
export const maxResponseBytes = 5 * 1024 * 1024;

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
  signal: AbortSignal;
}

/** A failed sys.fetch (network error, timeout, refused destination); the agent sees it thrown. */
export class FetchFailure extends Error {
  override name = 'FetchFailure';
}

/**
 * sys.fetch on the host. node:http rather than global fetch so that every address connected to can
 * be checked: IP-literal hosts directly, names through a guarded `lookup`. Redirects are returned,
 * not followed (a redirect could lead to a refused address). No keep-alive agent: a pooled socket
 * would skip the lookup check for a run with other rules.
 */
export function httpFetch(request: FetchRequest, options: FetchOptions): Promise<FetchResult> {
  const url = new URL(request.url);
  const label = `sys.fetch ${request.method} ${url.href}`;
  return sendRequest(url, request, options).catch((err: unknown) => {
    const reason = err instanceof Error ? err.message : String(err);
    throw new FetchFailure(`${label} failed: ${reason}`);
  });
}

function sendRequest(url: URL, request: FetchRequest, options: FetchOptions): Promise<FetchResult> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return Promise.reject(new Error('only http: and https: URLs can be fetched'));
  }
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  // Node does not call `lookup` for IP literals, so those are checked here.
  if (parseIp(hostname) && !isDestinationAllowed(options.allow, { hostname, port, address: hostname })) {
    return Promise.reject(refusal(options.allow, hostname));
  }
  return new Promise((resolve, reject) => {
    const transport = url.protocol === 'https:' ? https : http;
    const headers = withContentLength(request);
    const req = transport.request(url, {
      method: request.method,
      headers,
      agent: false,
      lookup: guardedLookup(options.allow, port),
    });
    const stop = watchRequest(req, options);
    req.on('error', (err) => (stop(), reject(err)));
    req.on('response', (res) => readResponse(res, req).then(resolve, reject).finally(stop));
    req.end(request.body ?? undefined);
  });
}

/** Destroys the request on timeout or when the run ends; returns the function that stops watching. */
function watchRequest(req: http.ClientRequest, options: FetchOptions): () => void {
  const onAbort = () => req.destroy(new Error('the run ended'));
  options.signal.addEventListener('abort', onAbort, { once: true });
  const timer =
    options.timeoutMs === null
      ? undefined
      : setTimeout(() => req.destroy(new Error(`timed out after ${options.timeoutMs} ms`)), options.timeoutMs);
  return () => {
    clearTimeout(timer);
    options.signal.removeEventListener('abort', onAbort);
  };
}

function readResponse(res: IncomingMessage, req: http.ClientRequest): Promise<FetchResult> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxResponseBytes) req.destroy(new Error(`response body larger than ${maxResponseBytes} bytes`));
      else chunks.push(chunk);
    });
    res.on('error', reject);
    res.on('aborted', () => reject(new Error('connection closed before the response ended')));
    res.on('end', () =>
      resolve({ status: res.statusCode ?? 0, headers: joinHeaders(res.rawHeaders), text: Buffer.concat(chunks).toString('utf8') }),
    );
  });
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

/** DNS lookup that only hands out addresses the rules allow, so the socket cannot reach any other. */
function guardedLookup(allow: readonly AllowRule[], port: number): LookupFunction {
  return (hostname, options: LookupOptions, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '');
      const allowed = addresses.filter((a) => isDestinationAllowed(allow, { hostname, port, address: a.address }));
      const first = allowed[0];
      if (!first) return callback(refusal(allow, `${hostname} (${addresses.map((a) => a.address).join(', ')})`), '');
      if (options.all) return callback(null, allowed);
      callback(null, first.address, first.family);
    });
  };
}

function refusal(allow: readonly AllowRule[], what: string): Error {
  const why = allow.length === 0 ? 'is not a public address' : 'is not allowed by AGENT_HTTP_ALLOW';
  return new Error(`destination refused: ${what} ${why}`);
}
