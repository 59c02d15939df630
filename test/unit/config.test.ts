import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../shared/config.js';

describe('loadConfig', () => {
  it('has defaults that run on one machine', () => {
    const config = loadConfig({});
    assert.equal(config.port, 3000);
    assert.equal(config.databaseUrl, 'postgres://127.0.0.1:5432/agentexec');
    assert.equal(config.maxAgentRuntimeMs, 60_000);
    assert.equal(config.convWaitMs, 60_000, 'CONV_WAIT_MS defaults to the max agent runtime');
    assert.equal(config.workerConcurrency, 1000);
    assert.equal(config.databasePoolSize, 10);
    assert.deepEqual(config.agentHttpAllow, []);
  });

  it('names prepared statements until the pooler cannot keep them, unless DATABASE_PREPARED_STATEMENTS says otherwise', () => {
    assert.equal(loadConfig({}).databasePreparedStatements, 'auto');
    assert.equal(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'true' }).databasePreparedStatements, true);
    assert.equal(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'no' }).databasePreparedStatements, false);
    assert.equal(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'AUTO' }).databasePreparedStatements, 'auto');
    assert.throws(() => loadConfig({ DATABASE_PREPARED_STATEMENTS: 'sometimes' }), /DATABASE_PREPARED_STATEMENTS: must be auto, true or false/);
  });

  it('stops with a message naming every bad variable', () => {
    assert.throws(
      () => loadConfig({ PORT: 'eighty', REDIS_URL: 'http://x', AGENT_MEMORY_MB: '2' }),
      (err: unknown) => err instanceof ConfigError && /PORT/.test(err.message) && /REDIS_URL/.test(err.message) && /AGENT_MEMORY_MB/.test(err.message),
    );
  });

  it('requires the secrets and an SMTP server in production', () => {
    assert.throws(() => loadConfig({ NODE_ENV: 'production' }), /SESSION_SECRET: required[\s\S]*SECRETS_KEY: required[\s\S]*SMTP_URL: required/);
  });

  it('reads lists and booleans', () => {
    const config = loadConfig({ AGENT_HTTP_ALLOW: ' api.example.com, 10.0.0.0/8 ', COOKIE_SECURE: 'false' });
    assert.deepEqual(config.agentHttpAllow, ['api.example.com', '10.0.0.0/8']);
    assert.equal(config.cookieSecure, false);
  });

  it('reads the sign-in settings, with safe defaults', () => {
    const defaults = loadConfig({});
    assert.equal(defaults.cookieSecure, true);
    assert.equal(defaults.trustProxy, false);
    assert.equal(defaults.loginIpMaxFailures, 30);
    const set = loadConfig({ TRUST_PROXY: 'true', LOGIN_IP_MAX_FAILURES: '5', ALLOWED_ORIGINS: 'https://a.example, https://b.example' });
    assert.equal(set.trustProxy, true);
    assert.equal(set.loginIpMaxFailures, 5);
    assert.deepEqual(set.allowedOrigins, ['https://a.example', 'https://b.example']);
    assert.throws(() => loadConfig({ TRUST_PROXY: 'maybe' }), /TRUST_PROXY/);
  });

  it('reads the Redis Cluster settings: nodes, and a hash tag on the key prefix (DESIGN §17)', () => {
    const plain = loadConfig({});
    assert.equal(plain.redisCluster, false);
    assert.equal(plain.queuePrefix, 'agentexec', 'keys are named as before on one Redis');
    const cluster = loadConfig({ REDIS_CLUSTER: 'true', REDIS_URL: 'redis://a:7000, redis://b:7001', REDIS_SHARDS: '1' });
    assert.equal(cluster.redisUrl, 'redis://a:7000,redis://b:7001');
    assert.equal(cluster.queuePrefix, '{agentexec}');
    assert.equal(loadConfig({ REDIS_CLUSTER: 'true', QUEUE_PREFIX: 'app-{tag}' }).queuePrefix, 'app-{tag}', 'a prefix with a hash tag is kept');
    assert.equal(loadConfig({ REDIS_CLUSTER: 'true', QUEUE_PREFIX: 'a{}b' }).queuePrefix, '{a{}b}', 'an empty {} is no hash tag');
    assert.throws(() => loadConfig({ REDIS_URL: 'redis://a:7000,redis://b:7001' }), /REDIS_URL: names several nodes, which needs REDIS_CLUSTER=true/);
    assert.throws(() => loadConfig({ REDIS_CLUSTER: 'true', REDIS_URL: 'redis://a:7000,http://b' }), /REDIS_URL/);
    assert.equal(loadConfig({}).redisShards, 1);
    assert.equal(loadConfig({ REDIS_SHARDS: '3' }).redisShards, 3);
    assert.throws(() => loadConfig({ REDIS_SHARDS: '0' }), /REDIS_SHARDS/);
  });
});
