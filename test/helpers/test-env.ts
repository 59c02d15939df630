import { randomBytes } from 'node:crypto';

/**
 * The environment of this test run: its own database and queue prefix, so runs cannot disturb each
 * other. Fixed at load time; setup.ts creates and drops the database.
 */
const runTag = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
const baseDatabaseUrl = process.env.TEST_DATABASE_BASE_URL ?? 'postgres://postgres@127.0.0.1:5432';

export const testEnv: Record<string, string> = {
  DATABASE_URL: `${baseDatabaseUrl}/agentexec_test_${runTag}`,
  REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
  QUEUE_PREFIX: `agentexec-test-${runTag}`,
  SECRETS_KEY: randomBytes(32).toString('base64url'),
  SESSION_SECRET: randomBytes(32).toString('base64url'),
  LOG_LEVEL: 'silent',
  WORKER_CONCURRENCY: '8',
  MAX_AGENT_RUNTIME_MS: '5000',
  AGENT_HTTP_ALLOW: '127.0.0.1',
  COOKIE_SECURE: 'false',
  // Every suite signs in from 127.0.0.1: the per-client limit is tested with a queue prefix of its own.
  LOGIN_IP_MAX_FAILURES: '100000',
};
