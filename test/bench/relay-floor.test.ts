import assert from 'node:assert/strict';
import { createClient } from '../../bench/client.js';
import { stampedTokens, startLlmLikeServer, type LlmLikeServer } from '../../bench/io/llm-server.js';
import { relayFloorKinds, startRelayFloor } from '../../bench/io/relay-floor.js';
import { testEnv } from '../helpers/test-env.js';

/**
 * bench:io's relay floors (bench/io/relay-floor.ts) must relay what the product relays, or the ratio it
 * reports is to nothing: real processes, a real Redis and the bench's LLM-like server.
 */
describe('bench:io relay floors', function () {
  this.timeout(30_000);
  let upstream: LlmLikeServer;

  before(async () => {
    upstream = await startLlmLikeServer({ firstByteMs: 10, totalMs: 100, chunks: 4, format: 'chat-stream' });
  });
  after(() => upstream.close());

  for (const kind of relayFloorKinds) {
    it(`${kind}: streams every token of the upstream's answer, in order, as the API's events`, async () => {
      const floor = await startRelayFloor(kind, { upstream: upstream.url, redisUrl: testEnv.REDIS_URL!, prefix: testEnv.QUEUE_PREFIX! });
      const client = createClient(floor.baseUrl, { bearerKey: 'none' });
      try {
        const requestsBefore = upstream.requests();
        const calls = await Promise.all([1, 2].map(() => client.stream('/api/exec/execAgent', { stream: true }).done));
        for (const events of calls) {
          assert.deepEqual(
            events.map((e) => e.event),
            ['start', 'delta', 'delta', 'delta', 'delta', 'end'],
          );
          const tokens = events.filter((e) => e.event === 'delta').flatMap((e) => stampedTokens((JSON.parse(e.data) as { text: string }).text));
          assert.deepEqual(
            tokens.map((t) => t.position),
            [1, 2, 3, 4],
          );
          // Each token arrives after the server stamped it: the relay time the bench reports is positive.
          for (const [i, token] of tokens.entries()) assert.ok(events[i + 1]!.receivedHr >= token.stamp);
          assert.equal((JSON.parse(events.at(-1)!.data) as { resultCode: string }).resultCode, 'success');
        }
        assert.equal(upstream.requests() - requestsBefore, 2, 'one upstream request per call');
      } finally {
        client.close();
        await floor.stop();
      }
    });
  }
});
