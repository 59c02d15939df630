import assert from 'node:assert/strict';
import { openSecret, sealSecret } from '../../shared/agent-secrets.js';
import { createSecretBox } from '../../shared/secret-box.js';
import { generateServiceAccountKey, keySecretMatches, parseServiceAccountKey } from '../../shared/service-account-key.js';

describe('service account keys', () => {
  it('parses a generated key and matches its secret against the stored hash only', () => {
    const key = generateServiceAccountKey();
    const parsed = parseServiceAccountKey(key.key);
    assert.equal(parsed?.keyId, key.keyId);
    assert.ok(keySecretMatches(parsed!.secret, key.secretHash));
    assert.ok(!keySecretMatches(`${parsed!.secret.slice(0, -1)}x`, key.secretHash));
  });

  it('refuses strings that are not keys', () => {
    for (const s of ['', 'ak_', 'ak_short_secret', `Bearer ${generateServiceAccountKey().key}`]) assert.equal(parseServiceAccountKey(s), undefined);
  });
});

describe('secret box', () => {
  it('round-trips and refuses tampered or foreign ciphertexts', () => {
    const box = createSecretBox('k'.repeat(32));
    const sealed = box.seal('hunter2');
    assert.ok(!sealed.includes('hunter2'));
    assert.equal(box.open(sealed), 'hunter2');
    assert.notEqual(box.seal('hunter2'), sealed, 'a fresh IV each time');
    assert.throws(() => box.open(sealed.slice(0, -2) + 'AA'));
    assert.throws(() => createSecretBox('z'.repeat(32)).open(sealed));
  });

  it('never repeats an IV, across the refills of its pool, and every seal opens', () => {
    const box = createSecretBox('k'.repeat(32));
    const seals = Array.from({ length: 1000 }, (_, i) => box.seal(`answer ${i}`));
    const ivs = new Set(seals.map((sealed) => sealed.split('.')[1]));
    assert.equal(ivs.size, seals.length);
    for (const [i, sealed] of seals.entries()) assert.equal(box.open(sealed), `answer ${i}`);
  });
});

describe('sealed agent secrets', () => {
  const box = createSecretBox('k'.repeat(32));

  it('open only for the agent name, key and set they were sealed for', () => {
    const forDrafts = sealSecret(box, 'chat', 'API_KEY', 'sk-test', 'drafts');
    assert.equal(openSecret(box, 'chat', 'API_KEY', 'drafts', forDrafts), 'sk-test');
    assert.throws(() => openSecret(box, 'chat', 'API_KEY', 'production', forDrafts), /another agent, key or set/);
    const production = sealSecret(box, 'chat', 'API_KEY', 'sk-live', 'production');
    assert.equal(openSecret(box, 'chat', 'API_KEY', 'production', production), 'sk-live');
    assert.throws(() => openSecret(box, 'chat', 'API_KEY', 'drafts', production), /another agent, key or set/);
    assert.throws(() => openSecret(box, 'other', 'API_KEY', 'production', production), /another agent, key or set/);
  });

  it('open production values sealed before there were sets', () => {
    const before = box.seal(JSON.stringify(['chat', 'API_KEY', 'sk-live']));
    assert.equal(openSecret(box, 'chat', 'API_KEY', 'production', before), 'sk-live');
    assert.throws(() => openSecret(box, 'chat', 'API_KEY', 'drafts', before));
  });
});
