import http, { type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * An LLM-like server on loopback that speaks the OpenAI chat-completions stream format: POST
 * /v1/chat/completions with `stream: true` answers `text/event-stream`, one `data: {chunk}` event per
 * token (`choices[0].delta.content`), then `data: [DONE]`. The answer is "You said: " and the last
 * user message, one word per token. What the test controls:
 * - `holdAfter(n)`: the next answers stop after n tokens until `release()` (or `cut()`, which
 *   destroys their sockets);
 * - `requests`: what each request carried (its Authorization header and messages);
 * - `closedSockets`: when each answer's socket closed (ms since epoch), by request number.
 */
export interface LlmServer {
  /** http://127.0.0.1:<port>/v1, what an OpenAI client takes as its base URL. */
  baseUrl: string;
  /** `traceparent`: the W3C trace context header the request carried (DESIGN §18). */
  requests: { authorization: string | undefined; traceparent: string | undefined; messages: { role: string; content: string }[] }[];
  closedSockets: Map<number, number>;
  /** Token events written so far, over all answers. */
  tokensSent: () => number;
  /** Answers waiting at their hold. */
  held: () => number;
  holdAfter(tokens: number | null): void;
  release(): void;
  cut(): void;
  close(): Promise<void>;
}

/** The usage the server reports for an answer of `tokens` (with `stream_options.include_usage`): 7 prompt tokens. */
export function usageOf(tokens: string[]): { prompt_tokens: number; completion_tokens: number; total_tokens: number } {
  return { prompt_tokens: 7, completion_tokens: tokens.length, total_tokens: 7 + tokens.length };
}

export function answerTokens(userMessage: string): string[] {
  return `You said: ${userMessage}`.split(/(?= )/);
}

export async function startLlmServer(): Promise<LlmServer> {
  const requests: LlmServer['requests'] = [];
  const closedSockets = new Map<number, number>();
  let hold: number | null = null;
  let tokensSent = 0;
  const waiting = new Set<{ res: ServerResponse; go: () => void }>();

  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return void res.writeHead(404).end();
      const body = JSON.parse(text) as { messages: { role: string; content: string }[]; stream?: boolean; stream_options?: { include_usage?: boolean } };
      const number = requests.push({ authorization: req.headers.authorization, traceparent: typeof req.headers.traceparent === 'string' ? req.headers.traceparent : undefined, messages: body.messages });
      const socket: Socket = req.socket;
      socket.once('close', () => closedSockets.set(number, Date.now()));
      const lastUser = [...body.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
      void answer(res, answerTokens(lastUser), hold, body.stream_options?.include_usage === true);
    });
  });

  async function answer(res: ServerResponse, tokens: string[], holdAt: number | null, withUsage: boolean): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const [i, token] of tokens.entries()) {
      if (i === holdAt) {
        await new Promise<void>((go) => {
          const held = { res, go };
          waiting.add(held);
          res.once('close', () => waiting.delete(held));
        });
      }
      if (res.destroyed) return;
      const chunk = { id: 'chatcmpl-test', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: token }, finish_reason: null }] };
      res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      tokensSent += 1;
    }
    // As OpenAI with stream_options.include_usage: a last chunk with no choices and the usage.
    if (withUsage) res.write(`data: ${JSON.stringify({ id: 'chatcmpl-test', object: 'chat.completion.chunk', choices: [], usage: usageOf(tokens) })}\n\n`);
    res.end('data: [DONE]\n\n');
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    closedSockets,
    tokensSent: () => tokensSent,
    held: () => waiting.size,
    holdAfter(tokens) {
      hold = tokens;
    },
    release() {
      for (const held of waiting) held.go();
      waiting.clear();
    },
    cut() {
      for (const held of waiting) {
        held.res.socket?.destroy();
        held.go();
      }
      waiting.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
