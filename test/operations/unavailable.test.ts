import assert from 'node:assert/strict';
import { execAgent } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { testEnv } from '../helpers/test-env.js';
import { waitFor } from '../helpers/wait.js';

/** Redis or PostgreSQL going away: calls get 503 at once instead of hanging, and service comes back by itself. */
describe('when Redis or PostgreSQL is unreachable', () => {
  for (const server of ['Redis', 'PostgreSQL'] as const) {
    describe(server, () => {
      let proxy: TcpProxy;
      let stack: Stack;
      let key: string;
      const hello = uniqueAgentName('hello');

      before(async () => {
        const target = new URL(server === 'Redis' ? testEnv.REDIS_URL! : testEnv.DATABASE_URL!);
        proxy = await startTcpProxy(target.hostname, Number(target.port));
        const proxied = new URL(target);
        proxied.port = String(proxy.port);
        // Short runs are always taken on here (not left to the workers when this process's loop runs late): what Redis being down does to them is decided, not left to timing.
        stack = await startStack(server === 'Redis' ? { REDIS_URL: proxied.toString() } : { DATABASE_URL: proxied.toString() }, { inline: { maxLateMs: Number.POSITIVE_INFINITY } });
        key = (await createAccount(stack.runtime.db)).key;
        await publishAgent(stack.runtime.db, hello, `export default async (sys) => sys.say('hello')`);
        assert.equal((await execAgent(stack.url, key, { agentName: hello })).body.resultCode, 'success');
      });
      after(async () => {
        await proxy.restore().catch(() => undefined);
        await stack.close();
        await proxy.close();
      });

      it('answers 503 unavailable at once while it is down, and serves again when it is back', async () => {
        const earlier = await execAgent(stack.url, key, { agentName: hello });
        await proxy.cut();
        const started = Date.now();
        // A call on a conversation takes its turn in Redis and its run is queued; PostgreSQL keeps every run.
        const down = await execAgent(stack.url, key, { agentName: hello, convid: earlier.body.convid });
        assert.equal(down.status, 503);
        assert.equal(down.body.error.code, 'unavailable');
        assert.ok(Date.now() - started < 3000, `answered in ${Date.now() - started} ms, not after the run deadline`);
        await proxy.restore();
        await waitFor(async () => (await execAgent(stack.url, key, { agentName: hello, convid: earlier.body.convid })).body.resultCode === 'success', 15_000, 'service to resume');
      });

      if (server === 'Redis') {
        it('still answers a short run of a new conversation meanwhile: the web process runs it and PostgreSQL keeps it', async () => {
          await proxy.cut();
          try {
            const short = await execAgent(stack.url, key, { agentName: hello });
            assert.equal(short.status, 200);
            assert.deepEqual(short.body.output, [{ type: 'text', text: 'hello' }]);
            const record = await stack.runtime.db.selectFrom('executions').select('result_code').where('convid', '=', short.body.convid).executeTakeFirstOrThrow();
            assert.equal(record.result_code, 'success');
          } finally {
            await proxy.restore();
          }
          // Once Redis is back, the conversation goes on through the queue.
          const convid = (await execAgent(stack.url, key, { agentName: hello })).body.convid;
          await waitFor(async () => (await execAgent(stack.url, key, { agentName: hello, convid })).body.resultCode === 'success', 15_000, 'service to resume');
        });
      } else {
        it('answers a short run of a new conversation 503 at once too: the web process cannot keep it', async () => {
          await proxy.cut();
          try {
            const started = Date.now();
            const short = await execAgent(stack.url, key, { agentName: hello });
            assert.equal(short.status, 503);
            assert.equal(short.body.error.code, 'unavailable');
            assert.ok(Date.now() - started < 3000, `answered in ${Date.now() - started} ms`);
          } finally {
            await proxy.restore();
          }
        });
      }
    });
  }
});
