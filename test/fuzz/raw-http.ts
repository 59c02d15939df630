import { connect } from 'node:net';

/**
 * An HTTP/1.1 request written byte for byte on its own connection, so a test can send what fetch refuses
 * to: control characters in header values, duplicate headers, any method, chunked or unframed bodies.
 */
export interface RawRequest {
  method: string;
  path: string;
  /** In order, duplicates allowed; Host and Connection: close are added. */
  headers: [string, string][];
  body?: string | Buffer;
  /** How the body is framed: Content-Length (default), chunked, or neither header. */
  framing?: 'length' | 'chunked' | 'none';
}

export interface RawResponse {
  status: number;
  /** Lower-cased names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  text: string;
  /** The body parsed as JSON when the answer says it is JSON and it parses; undefined otherwise. */
  json: unknown;
}

/** Sends one request and reads the answer until the server closes the connection. */
export function sendRaw(port: number, request: RawRequest, timeoutMs = 15_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      const received = Buffer.concat(chunks);
      // A server that answers before reading the whole body may reset the connection after its answer.
      if (received.length && /\r\n\r\n/.test(received.toString('latin1'))) resolve(parseResponse(received));
      else reject(error ?? new Error(`connection closed without an answer to ${request.method} ${request.path}`));
    };
    socket.setTimeout(timeoutMs, () => finish(new Error(`no answer within ${timeoutMs} ms to ${request.method} ${request.path}`)));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('end', () => finish());
    socket.on('close', () => finish());
    socket.on('error', (err) => finish(err));
    socket.write(serialize(port, request), () => undefined);
  });
}

function serialize(port: number, request: RawRequest): Buffer {
  const body = typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : (request.body ?? Buffer.alloc(0));
  const framing = request.framing ?? 'length';
  const lines = [`${request.method} ${request.path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, 'Connection: close'];
  for (const [name, value] of request.headers) lines.push(`${name}: ${value}`);
  if (framing === 'length') lines.push(`Content-Length: ${body.length}`);
  if (framing === 'chunked') lines.push('Transfer-Encoding: chunked');
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  if (framing !== 'chunked') return Buffer.concat([head, body]);
  const chunked = body.length ? Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n')]) : Buffer.alloc(0);
  return Buffer.concat([head, chunked, Buffer.from('0\r\n\r\n')]);
}

function parseResponse(received: Buffer): RawResponse {
  const split = received.indexOf('\r\n\r\n');
  const [statusLine = '', ...headerLines] = received.subarray(0, split).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? NaN);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  let body = received.subarray(split + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = dechunk(body);
  const text = body.toString('utf8');
  let json: unknown;
  if (/^application\/json/i.test(headers['content-type'] ?? '')) {
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
  }
  return { status, headers, text, json };
}

function dechunk(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  while (at < body.length) {
    const lineEnd = body.indexOf('\r\n', at);
    if (lineEnd < 0) break;
    const size = parseInt(body.subarray(at, lineEnd).toString('latin1'), 16);
    if (!(size > 0)) break;
    parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}
