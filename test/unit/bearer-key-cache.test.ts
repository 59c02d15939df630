import assert from 'node:assert/strict';
import type { ServiceAccount } from '../../db/schema.js';
import { createBearerKeyCache } from '../../server/auth/bearer-key-cache.js';

function account(id: string, keyId = `key-${id}`): ServiceAccount {
  const at = new Date(0);
  return { id, name: `name-${id}`, role: 'user', plan: 'free', key_id: keyId, key_hash: '00', created_at: at, key_rotated_at: at };
}

describe('bearer key cache (unit)', () => {
  it('keeps at most maxEntries keys, dropping the least recently used first', () => {
    const cache = createBearerKeyCache({ maxEntries: 3 });
    for (const id of ['a', 'b', 'c']) cache.set(`key-${id}`, account(id), cache.generation);
    assert.ok(cache.get('key-a'), 'a is now the most recently used');
    cache.set('key-d', account('d'), cache.generation);
    assert.equal(cache.size, 3);
    assert.equal(cache.get('key-b'), undefined, 'b was the least recently used');
    assert.deepEqual(['key-a', 'key-c', 'key-d'].map((k) => cache.get(k)?.id), ['a', 'c', 'd']);
  });

  it('forgets an entry once it reaches the maximum age, counted from when it was cached', () => {
    let now = 1_000;
    const cache = createBearerKeyCache({ maxAgeMs: 60_000, now: () => now });
    cache.set('key-a', account('a'), cache.generation);
    now += 59_999;
    assert.equal(cache.get('key-a')?.id, 'a', 'a hit does not make an entry younger');
    now += 1;
    assert.equal(cache.get('key-a'), undefined);
    assert.equal(cache.size, 0);
  });

  it('drops every key of an account, its old key id and its new one, and leaves other accounts', () => {
    const cache = createBearerKeyCache();
    cache.set('old-a', account('a', 'old-a'), cache.generation);
    cache.set('new-a', account('a', 'new-a'), cache.generation);
    cache.set('key-b', account('b'), cache.generation);
    cache.dropAccount('a');
    assert.equal(cache.get('old-a'), undefined);
    assert.equal(cache.get('new-a'), undefined);
    assert.equal(cache.get('key-b')?.id, 'b');
    assert.equal(cache.size, 1);
    cache.dropAccount('unknown');
    assert.equal(cache.size, 1);
  });

  it('does not cache a read that started before a drop or a clear', () => {
    const cache = createBearerKeyCache();
    const beforeDrop = cache.generation;
    cache.dropAccount('someone-else');
    cache.set('key-a', account('a'), beforeDrop);
    assert.equal(cache.get('key-a'), undefined, 'the read may have returned the row as it was before the change');
    const beforeClear = cache.generation;
    cache.clear();
    cache.set('key-a', account('a'), beforeClear);
    assert.equal(cache.size, 0);
    cache.set('key-a', account('a'), cache.generation);
    assert.equal(cache.get('key-a')?.id, 'a');
  });

  it('replaces the entry of a key id cached again, without growing', () => {
    const cache = createBearerKeyCache();
    cache.set('key-a', account('a'), cache.generation);
    cache.set('key-a', { ...account('a'), role: 'admin' }, cache.generation);
    assert.equal(cache.size, 1);
    assert.equal(cache.get('key-a')?.role, 'admin');
    cache.clear();
    assert.equal(cache.size, 0);
    assert.equal(cache.get('key-a'), undefined);
  });
});
