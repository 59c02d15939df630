import assert from 'node:assert/strict';
import { createSpanIdGenerator } from '../../tracing/span-ids.js';

describe('span ids', () => {
  it('draws W3C trace and span ids: lowercase hex of 16 and 8 bytes, never all zeros, each new', () => {
    const ids = createSpanIdGenerator();
    const seen = new Set<string>();
    // More than one pool's worth, so that refills are crossed too.
    for (let i = 0; i < 2000; i++) {
      const traceId = ids.generateTraceId();
      const spanId = ids.generateSpanId();
      assert.match(traceId, /^[0-9a-f]{32}$/);
      assert.match(spanId, /^[0-9a-f]{16}$/);
      assert.notEqual(traceId, '0'.repeat(32));
      assert.notEqual(spanId, '0'.repeat(16));
      seen.add(traceId).add(spanId);
    }
    assert.equal(seen.size, 4000);
  });
});
