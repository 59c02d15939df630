import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { execAgent } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { testEnv } from '../helpers/test-env.js';

/**
 * A loopback server that counts its connections (sockets) and the most open at once. It holds every
 * request until none has come for 20 ms, then answers them all: a run that keeps to the limit stops
 * sending once its slots are full, one that does not opens every connection meanwhile. (The pause
 * only paces the server: a run that keeps to the limit passes however slow the machine is.) With
 * `gather`, it holds requests until that many are waiting instead.
 */
async function startCountingServer({ gather }: { gather?: number } = {}): Promise<{ port: number; connections: () => number; mostOpen: () => number; close: () => Promise<void> }> {
  let connections = 0;
  let open = 0;
  let mostOpen = 0;
  let held: http.ServerResponse[] = [];
  let quiet: NodeJS.Timeout | undefined;
  const release = () => {
    for (const res of held) res.end('ok');
    held = [];
  };
  const server = http.createServer((_req, res) => {
    held.push(res);
    if (gather) return void (held.length >= gather && release());
    clearTimeout(quiet);
    quiet = setTimeout(release, 20);
  });
  server.on('connection', (socket) => {
    connections += 1;
    open += 1;
    mostOpen = Math.max(mostOpen, open);
    socket.on('close', () => (open -= 1));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    mostOpen: () => mostOpen,
    close: () =>
      new Promise<void>((resolve) => {
        clearTimeout(quiet);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('sys.fetch limits through the API', () => {
  let target: Awaited<ReturnType<typeof startCountingServer>>;

  beforeEach(async () => {
    target = await startCountingServer();
  });
  afterEach(async () => {
    await target.close();
  });

  describe('with 127.0.0.1 allowed', () => {
    let stack: Stack;
    let key: string;
    const agents = { parallel: uniqueAgentName('parallel-fetch'), connect: uniqueAgentName('connect-fetch'), single: uniqueAgentName('one-fetch') };

    before(async () => {
      stack = await startStack({ AGENT_HTTP_ALLOW: '127.0.0.1', MAX_AGENT_RUNTIME_MS: '20000', WORKER_CONCURRENCY: '32' });
      key = (await createAccount(stack.runtime.db, 'user')).key;
      // 2,000 fetches, 1,000 at a time: the most host calls a run may have pending (DESIGN §12).
      await publishAgent(
        stack.runtime.db,
        agents.parallel,
        `export default async function (sys) {
          const lane = async () => { for (let i = 0; i < 2; i++) if ((await sys.fetch(sys.inputs.url)).text !== 'ok') throw new Error('bad answer'); };
          await Promise.all(Array.from({ length: 1000 }, lane));
          sys.say('done');
        }`,
      );
      await publishAgent(stack.runtime.db, agents.single, `export default async function (sys) { sys.say((await sys.fetch(sys.inputs.url)).text); }`);
      await publishAgent(
        stack.runtime.db,
        agents.connect,
        `export default async function (sys) { await sys.fetch(sys.inputs.url, { method: 'CONNECT', timeoutMs: 60000 }); }`,
      );
    });
    after(async () => {
      await stack.close();
    });

    it('reuses a caller\'s connections from run to run, and never lends one to another caller', async () => {
      const other = (await createAccount(stack.runtime.db, 'user')).key;
      const url = `http://127.0.0.1:${target.port}/`;
      for (const caller of [key, key, other, other]) {
        const res = await execAgent(stack.url, caller, { agentName: agents.single, inputs: { url } });
        assert.equal(res.body.resultCode, 'success', JSON.stringify(res.body.error));
      }
      assert.equal(target.connections(), 2, 'one connection per caller, each reused by its second run');
    });

    it('keeps the connections of a caller\'s runs that fetched together, for its next runs', async () => {
      // 24 runs fetching at once: more than the 16 idle connections a pool kept before, which closed the rest.
      const gathering = await startCountingServer({ gather: 24 });
      try {
        const caller = (await createAccount(stack.runtime.db, 'user')).key;
        const url = `http://127.0.0.1:${gathering.port}/`;
        const wave = () =>
          Promise.all(
            Array.from({ length: 24 }, async () => {
              const res = await execAgent(stack.url, caller, { agentName: agents.single, inputs: { url } });
              assert.equal(res.body.resultCode, 'success', JSON.stringify(res.body.error));
            }),
          );
        await wave();
        assert.equal(gathering.connections(), 24);
        await wave();
        assert.equal(gathering.connections(), 24, 'the second runs opened no connection');
      } finally {
        await gathering.close();
      }
    });

    it('keeps at most 16 connections open for 2,000 fetches of one run, and the run succeeds', async () => {
      const res = await execAgent(stack.url, key, { agentName: agents.parallel, inputs: { url: `http://127.0.0.1:${target.port}/` } });
      assert.equal(res.body.resultCode, 'success', JSON.stringify(res.body.error));
      assert.equal(target.connections(), 16, 'kept alive and reused');
      assert.equal(target.mostOpen(), 16, 'the most connections open at once');
    });

    it('ends a CONNECT fetch callFailed at once, without connecting', async () => {
      const res = await execAgent(stack.url, key, { agentName: agents.connect, inputs: { url: `http://127.0.0.1:${target.port}/` } });
      assert.equal(res.body.resultCode, 'callFailed');
      assert.match(res.body.error.message, /method CONNECT is not allowed/);
      assert.equal(target.connections(), 0);
    });
  });

  describe('with no AGENT_HTTP_ALLOW', () => {
    let stack: Stack;
    let key: string;
    const agent = uniqueAgentName('refused-fetch');

    before(async () => {
      stack = await startStack({ AGENT_HTTP_ALLOW: '', QUEUE_PREFIX: `${testEnv.QUEUE_PREFIX}-noallow` });
      key = (await createAccount(stack.runtime.db, 'user')).key;
      await publishAgent(stack.runtime.db, agent, `export default async function (sys) { await sys.fetch(sys.inputs.url); }`);
    });
    after(async () => {
      await stack.close();
    });

    it('ends a refused name callFailed, naming the host but not the addresses it resolved to', async () => {
      const res = await execAgent(stack.url, key, { agentName: agent, inputs: { url: `http://localhost:${target.port}/` } });
      assert.equal(res.body.resultCode, 'callFailed');
      assert.match(res.body.error.message, /destination refused: localhost is not a public address/);
      assert.doesNotMatch(res.body.error.message, /127\.0\.0\.1|::1/);
      assert.equal(target.connections(), 0);
    });
  });
});
