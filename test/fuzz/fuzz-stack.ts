import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { maintenanceQueueName } from '../../shared/channels.js';
import { mailQueueName } from '../../shared/mail-jobs.js';
import { createBrowser } from '../helpers/browser.js';
import { createAccount, createUser, strongPassword } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { testEnv } from '../helpers/test-env.js';
import { waitFor } from '../helpers/wait.js';
import { sendRaw, type RawRequest, type RawResponse } from './raw-http.js';

/** Small, so bodies near and over the limit are cheap to send. */
export const fuzzBodyLimit = 65_536;

/** `signedOut` is a browser on our origin without a session (it reaches the sign-in endpoints); `none` sends no credential and no origin. */
export type CredentialKind = 'adminKey' | 'developerKey' | 'userKey' | 'cookie' | 'signedOut' | 'none';
export const credentialKinds: readonly CredentialKind[] = ['adminKey', 'developerKey', 'userKey', 'cookie', 'signedOut', 'none'];

export interface FuzzStack {
  stack: Stack;
  port: number;
  /** The headers that carry each kind of credential (a cookie call also names the own origin, as a browser does). */
  credentialHeaders(kind: CredentialKind): [string, string][];
  send(request: RawRequest): Promise<RawResponse>;
  close(): Promise<void>;
}

/**
 * One real stack for the fuzz suite, with its own queue prefix (no job left by another suite runs in the
 * middle of a batch) and a credential of each kind. The cookie session is an admin's, so cookie calls get
 * past every role check to the body validation.
 */
export async function startFuzzStack(): Promise<FuzzStack> {
  const stack = await startStack({ BODY_LIMIT_BYTES: String(fuzzBodyLimit), QUEUE_PREFIX: `${testEnv.QUEUE_PREFIX}-fuzz` });
  const db = stack.runtime.db;
  const [admin, developer, user] = await Promise.all([createAccount(db, 'admin'), createAccount(db, 'developer'), createAccount(db, 'user')]);
  const password = strongPassword();
  const sessionUser = await createUser(db, { password, role: 'admin' });
  const browser = createBrowser(stack.url);
  const login = await browser.post('/api/auth/login', { email: sessionUser.email, password });
  assert.equal(login.status, 200, 'the fuzz session signs in');
  await waitForBackgroundJobs(stack);
  const cookie = browser.cookie!;
  const byKind: Record<CredentialKind, [string, string][]> = {
    adminKey: [['Authorization', `Bearer ${admin.key}`]],
    developerKey: [['Authorization', `Bearer ${developer.key}`]],
    userKey: [['Authorization', `Bearer ${user.key}`]],
    cookie: [['Cookie', cookie], ['Origin', stack.url], ['Sec-Fetch-Site', 'same-origin']],
    signedOut: [['Origin', stack.url], ['Sec-Fetch-Site', 'same-origin']],
    none: [],
  };
  const port = stack.web.port;
  return {
    stack,
    port,
    credentialHeaders: (kind) => byKind[kind],
    send: (request) => sendRaw(port, request),
    close: () => stack.close(),
  };
}

/** The maintenance and mail sweeps a worker schedules at start run once at once; a snapshot waits until they are done. */
async function waitForBackgroundJobs(stack: Stack): Promise<void> {
  const connection = new Redis(stack.config.redisUrl, { maxRetriesPerRequest: null });
  const queues = [maintenanceQueueName, mailQueueName].map((name) => new Queue(name, { connection, prefix: stack.config.queuePrefix }));
  try {
    await waitFor(async () => {
      const counts = await Promise.all(queues.map((queue) => queue.getJobCounts('waiting', 'active', 'prioritized')));
      return counts.every((c) => Object.values(c).every((n) => n === 0));
    }, 20_000, 'the start-up sweeps');
  } finally {
    await Promise.all(queues.map((queue) => queue.close()));
    connection.disconnect();
  }
}

/** The process still answers (it did not crash or hang). */
export async function assertStillAlive(fuzz: FuzzStack): Promise<void> {
  const health = await fuzz.send({ method: 'GET', path: '/healthz', headers: [] });
  assert.equal(health.status, 200, 'GET /healthz after the request');
}

/** A fresh id no row has. */
export const unknownId = (): string => randomUUID();
