import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { createEventStreamParser } from '../../shared/server-sent-events.js';

/**
 * One process of a relay floor (relay-floor.ts): the least a process must do to pass an LLM's streamed
 * tokens on to a streaming client, with none of the product's work (no key, job, sandbox, database).
 *
 * `--role direct --port P --upstream URL`: takes a call, reads the upstream's chat-completions stream
 * and writes each token to the caller as a `delta` event, in one process.
 * `--role front --port P --redis URL --prefix K`: takes a call, subscribes to a channel of its own for
 * it and pushes the call on a Redis list; relays what the channel carries, and ends at an empty message.
 * `--role runner --upstream URL --redis URL --prefix K`: pops calls off that list, reads the upstream's
 * stream for each and publishes every token on the call's channel: web, queue, worker and pub/sub, the
 * product's topology, each hop doing nothing else.
 *
 * Its answers are the API's stream events (`start`, `delta` with `{text}`, `end` with a success), so the
 * bench's clients and their timing are the same as against the product.
 */

const { values } = parseArgs({
  options: { role: { type: 'string' }, port: { type: 'string' }, upstream: { type: 'string' }, redis: { type: 'string' }, prefix: { type: 'string' } },
});
const upstreamBody = '{"stream":true}';
const endData = JSON.stringify({ resultCode: 'success', convid: 'floor' });

/** The token of a chat-completions event's data, or '' (`[DONE]`, or no content). */
function tokenOf(data: string): string {
  if (data === '[DONE]') return '';
  const content = (JSON.parse(data) as { choices?: { delta?: { content?: unknown } }[] }).choices?.[0]?.delta?.content;
  return typeof content === 'string' ? content : '';
}

/** Streams the upstream's answer, calling `onToken` for each token and `onEnd` once it is over. */
function readUpstream(agent: http.Agent, upstream: string, onToken: (text: string) => void, onEnd: (error?: Error) => void): void {
  const request = http.request(upstream, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (response) => {
    response.setEncoding('utf8');
    const parser = createEventStreamParser();
    response.on('data', (chunk: string) => {
      for (const event of parser.push(chunk)) {
        const text = tokenOf(event.data);
        if (text) onToken(text);
      }
    });
    response.on('end', () => onEnd());
    response.on('error', onEnd);
  });
  request.on('error', onEnd);
  request.end(upstreamBody);
}

/** An answer as the API streams one: numbered events, `start` first. */
function openEvents(res: http.ServerResponse): (event: string, data: string) => void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let id = 0;
  const send = (event: string, data: string) => void res.write(`id: ${++id}\nevent: ${event}\ndata: ${data}\n\n`);
  send('start', '{}');
  return send;
}

/** An HTTP server on `port` that answers GET (a health check) with 200 and hands every other call to `onCall`. */
function serve(port: number, onCall: (res: http.ServerResponse) => void): void {
  const server = http.createServer((req, res) => {
    req.resume();
    if (req.method === 'GET') return void res.end('ok');
    req.on('end', () => onCall(res));
  });
  server.keepAliveTimeout = 65_000;
  server.listen(port, '127.0.0.1');
}

function required(name: keyof typeof values): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new Error(`--${name} is required`);
  return value;
}

const upstreamAgent = () => new http.Agent({ keepAlive: true, maxSockets: Infinity });

switch (values.role) {
  case 'direct': {
    const upstream = required('upstream');
    const agent = upstreamAgent();
    serve(Number(required('port')), (res) => {
      const send = openEvents(res);
      readUpstream(
        agent,
        upstream,
        (text) => send('delta', JSON.stringify({ text })),
        () => {
          send('end', endData);
          res.end();
        },
      );
    });
    break;
  }
  case 'front': {
    const prefix = required('prefix');
    const commands = new Redis(required('redis'), { enableAutoPipelining: true });
    const subscriber = new Redis(required('redis'));
    const calls = new Map<string, (message: string) => void>();
    subscriber.on('message', (channel: string, message: string) => calls.get(channel)?.(message));
    // Healthy only once both connections are ready: a call's SUBSCRIBE sent while the subscriber's
    // ready check ran was lost (the connection showed no subscription, its last command INFO), its
    // LPUSH went ahead, and the call waited forever for tokens published to nobody.
    await Promise.all([subscriber, commands].map((redis) => (redis.status === 'ready' ? undefined : once(redis, 'ready'))));
    serve(Number(required('port')), (res) => {
      const id = randomBytes(8).toString('hex');
      const channel = `${prefix}:call:${id}`;
      const send = openEvents(res);
      calls.set(channel, (message) => {
        if (message !== '') return send('delta', message);
        calls.delete(channel);
        void subscriber.unsubscribe(channel);
        send('end', endData);
        res.end();
      });
      void subscriber.subscribe(channel).then(() => commands.lpush(`${prefix}:calls`, id));
    });
    break;
  }
  case 'runner': {
    const prefix = required('prefix');
    const upstream = required('upstream');
    const agent = upstreamAgent();
    const queue = new Redis(required('redis'));
    const publisher = new Redis(required('redis'), { enableAutoPipelining: true });
    for (;;) {
      const popped = await queue.brpop(`${prefix}:calls`, 0);
      if (!popped) continue;
      const channel = `${prefix}:call:${popped[1]}`;
      readUpstream(
        agent,
        upstream,
        (text) => void publisher.publish(channel, JSON.stringify({ text })),
        () => void publisher.publish(channel, ''),
      );
    }
  }
  default:
    throw new Error(`--role must be direct, front or runner, not ${String(values.role)}`);
}
