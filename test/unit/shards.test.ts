import assert from 'node:assert/strict';
import { createShards, shardPrefix, uuidFrom } from '../../shared/shards.js';
import { crc16, keySlot } from '../../shared/key-slot.js';

describe('shards (DESIGN §17)', () => {
  it('computes slots as Redis does (CLUSTER KEYSLOT)', () => {
    assert.equal(crc16('123456789'), 0x31c3);
    assert.equal(keySlot('somekey'), 11058);
    assert.equal(keySlot('foo{hash_tag}'), 2515);
    assert.equal(keySlot('bar{hash_tag}'), 2515);
    assert.equal(keySlot('a{}b'), crc16('a{}b') % 16384, 'an empty tag hashes the whole key');
  });

  it('with one shard, keeps the prefix as it is', () => {
    const shards = createShards('{agentexec}', 1);
    assert.deepEqual(shards.prefixes, ['{agentexec}']);
    assert.equal(shards.prefixOf('any-id'), '{agentexec}');
  });

  it("puts shard i's hash tag in the i-th of N equal slot ranges, whatever the prefix", () => {
    for (const prefix of ['{agentexec}', 'agentexec', 'app-{tag}-x', '{t-1234}']) {
      for (const count of [2, 3, 4, 6]) {
        const prefixes = createShards(prefix, count).prefixes;
        prefixes.forEach((shard, i) => {
          const slot = keySlot(`${shard}:runs:wait`);
          assert.ok(slot >= Math.floor((i * 16384) / count) && slot < Math.floor(((i + 1) * 16384) / count), `${prefix} shard ${i}/${count}: slot ${slot}`);
        });
        assert.equal(new Set(prefixes).size, count);
      }
    }
    assert.match(shardPrefix('app-{tag}-x', 1, 3), /^app-\{tag\.s1(\.\d+)?\}-x$/, 'the text around the tag is kept');
  });

  it('draws run ids on their conversation\'s shard, spreading conversations over all shards', () => {
    const shards = createShards('{agentexec}', 3);
    const seen = [0, 0, 0];
    for (let i = 0; i < 300; i += 1) {
      const convid = crypto.randomUUID();
      const runId = shards.runIdFor(convid);
      assert.match(runId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.equal(shards.of(runId), shards.of(convid));
      seen[shards.of(convid)]! += 1;
    }
    for (const count of seen) assert.ok(count > 60, `each shard has a share of the conversations: ${seen.join(', ')}`);
  });

  it('names a child run by its seed: the same id for the same seed in any process, on its conversation\'s shard', () => {
    const shards = createShards('{agentexec}', 3);
    const other = createShards('{agentexec}', 3);
    const ids = new Set<string>();
    for (let i = 0; i < 100; i += 1) {
      const convid = uuidFrom(`parent/call/${i}/conversation`);
      const runId = shards.runIdFrom(`parent/call/${i}`, convid);
      assert.match(runId, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.equal(shards.of(runId), shards.of(convid));
      assert.equal(other.runIdFrom(`parent/call/${i}`, convid), runId);
      ids.add(runId);
    }
    assert.equal(ids.size, 100, 'another seed, another id');
  });
});
