import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LlmLikeServer {
  url: string;
  requests(): number;
  close(): Promise<void>;
}

/**
 * A loopback server that answers like an LLM: the first byte after `firstByteMs`, then the body in
 * `chunks` pieces spread evenly until `totalMs` after the request.
 */
export async function startLlmLikeServer(options: { firstByteMs: number; totalMs: number; chunks: number }): Promise<LlmLikeServer> {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests += 1;
    req.resume();
    const started = Date.now();
    const step = (options.totalMs - options.firstByteMs) / Math.max(1, options.chunks - 1);
    let sent = 0;
    const sendNext = () => {
      if (res.destroyed) return;
      if (sent === 0) res.writeHead(200, { 'content-type': 'text/plain' });
      sent += 1;
      res.write(`token${sent} `);
      if (sent >= options.chunks) return void res.end();
      setTimeout(sendNext, Math.max(0, started + options.firstByteMs + sent * step - Date.now()));
    };
    setTimeout(sendNext, options.firstByteMs);
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/complete`,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
