import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LlmLikeServer {
  url: string;
  requests(): number;
  /**
   * performance.now() when the request whose URL carried `?call=<tag>` arrived (forgotten once asked):
   * how long a run took to reach its first wait, seen from outside the product.
   */
  arrivedAt(tag: string): number | undefined;
  close(): Promise<void>;
}

export interface LlmLikeOptions {
  firstByteMs: number;
  totalMs: number;
  chunks: number;
  /**
   * `text`: plain text tokens. `chat-stream`: the OpenAI chat-completions stream format (one
   * `data: {…delta.content…}` event per token, then `data: [DONE]`), each token stamped with
   * `@<performance.now()>` as it is written, so a client in this process can time its relay.
   */
  format: 'text' | 'chat-stream';
}

/**
 * A loopback server that answers like an LLM: the first byte after `firstByteMs`, then the body in
 * `chunks` pieces spread evenly until `totalMs` after the request.
 */
export async function startLlmLikeServer(options: LlmLikeOptions): Promise<LlmLikeServer> {
  let requests = 0;
  const arrivals = new Map<string, number>();
  const server = http.createServer((req, res) => {
    requests += 1;
    const tag = /[?&]call=([^&]+)/.exec(req.url ?? '')?.[1];
    if (tag) arrivals.set(tag, performance.now());
    req.resume();
    const started = Date.now();
    const step = (options.totalMs - options.firstByteMs) / Math.max(1, options.chunks - 1);
    const chatStream = options.format === 'chat-stream';
    let sent = 0;
    const sendNext = () => {
      if (res.destroyed) return;
      if (sent === 0) res.writeHead(200, { 'content-type': chatStream ? 'text/event-stream' : 'text/plain' });
      sent += 1;
      res.write(chatStream ? chatChunk(`token${sent}@${performance.now().toFixed(3)} `) : `token${sent} `);
      if (sent >= options.chunks) return void res.end(chatStream ? 'data: [DONE]\n\n' : undefined);
      setTimeout(sendNext, Math.max(0, started + options.firstByteMs + sent * step - Date.now()));
    };
    setTimeout(sendNext, options.firstByteMs);
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`,
    requests: () => requests,
    arrivedAt(tag) {
      const at = arrivals.get(tag);
      arrivals.delete(tag);
      return at;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function chatChunk(content: string): string {
  return `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }] })}\n\n`;
}

/** A token of a chat stream as the client received it: its place in the answer (1 for the first) and its stamp. */
export interface StampedToken {
  position: number;
  /** performance.now() at the server as it wrote the token. */
  stamp: number;
}

/** The stamped tokens in a text the client received. */
export function stampedTokens(text: string): StampedToken[] {
  return [...text.matchAll(/token(\d+)@(\d+\.\d{3}) /g)].map((match) => ({ position: Number(match[1]), stamp: Number(match[2]) }));
}
