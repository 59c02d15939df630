import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of Redis, PostgreSQL or the web server, so a test can make the server
 * unreachable (every connection dropped, new ones refused) and reachable again, or cut the
 * connections open now while new ones still get through, without touching the real server.
 */
export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  /** Destroys the connections open now; later ones are proxied as before. */
  dropConnections(): void;
  /** Passes nothing from the server to the clients (it waits, in order) until releaseReplies. */
  holdReplies(): void;
  releaseReplies(): void;
  /** Everything clients sent through the proxy so far, as text (an HTTP test reads request heads in it). */
  sent(): string;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  /** Each connection's server side, and the client it answers. */
  const pairs = new Map<Socket, Socket>();
  let holding = false;
  let sent = '';
  let server: Server | undefined;
  let port = 0;

  const listen = async () => {
    if (server) return;
    server = createServer((client) => {
      const upstream = connect(targetPort, targetHost);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.on('data', (chunk: Buffer) => void (sent += chunk.toString('latin1')));
      client.pipe(upstream);
      pairs.set(upstream, client);
      upstream.on('close', () => pairs.delete(upstream));
      if (holding) upstream.pause();
      else upstream.pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    const address = server.address();
    port = typeof address === 'object' && address ? address.port : port;
  };
  const stop = async () => {
    const closing = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()));
  };

  await listen();
  return {
    get port() {
      return port;
    },
    cut: stop,
    restore: listen,
    dropConnections() {
      for (const socket of sockets) socket.destroy();
    },
    holdReplies() {
      holding = true;
      for (const [upstream, client] of pairs) {
        upstream.unpipe(client);
        upstream.pause();
      }
    },
    releaseReplies() {
      holding = false;
      for (const [upstream, client] of pairs) upstream.pipe(client);
    },
    sent: () => sent,
    close: stop,
  };
}
