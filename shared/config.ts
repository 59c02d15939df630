import { z } from 'zod';
import { agentNamePattern } from './api.js';

/**
 * Configuration, read from the environment once (this is the only module that reads process.env).
 * A bad value stops start-up with a message naming the variable.
 */
export interface Config {
  nodeEnv: string;
  port: number;
  databaseUrl: string;
  /** One Redis URL; with `redisCluster`, one or more nodes of the cluster, comma-separated (DESIGN §17). */
  redisUrl: string;
  /** Every connection is a Redis Cluster client (REDIS_CLUSTER). */
  redisCluster: boolean;
  /**
   * The prefix of every Redis key and channel. On a cluster it carries a hash tag (QUEUE_PREFIX as given
   * when it has one, else QUEUE_PREFIX in braces), so every key a script or a transaction touches is in
   * one slot, as BullMQ asks.
   */
  queuePrefix: string;
  /** Shards the conversations are spread over (DESIGN §17, shared/shards.ts): each has its own key prefix. */
  redisShards: number;
  /** Runs a worker process holds at once (DESIGN §11: runs in flight, not connections). */
  workerConcurrency: number;
  /** PostgreSQL connections per process; `npm start` (web and worker in one) opens twice this. */
  databasePoolSize: number;
  /**
   * The hottest statements as named prepared statements (DESIGN §17): `auto` until a pooler in
   * transaction mode (PgBouncer before 1.21) shows it cannot keep them (db/database.ts executePrepared).
   */
  databasePreparedStatements: PreparedStatements;
  /** A worker above this RSS takes no new job until it is below. */
  workerMemoryMb: number;
  maxAgentRuntimeMs: number;
  agentMemoryMb: number;
  /** CPU time one run may use (isolate CPU, not wall time); beyond it the run ends `timedOut` (DESIGN §12). */
  agentCpuMs: number;
  /** Niceness of the threads that run agent code (workers/sandbox/isolate-threads.ts); 0 leaves them at the event loop's. */
  agentThreadNice: number;
  agentHttpAllow: string[];
  /** Destinations webhooks may be delivered to (DESIGN §14), as AGENT_HTTP_ALLOW. */
  webhookAllow: string[];
  /** How often a worker queues again the webhook deliveries left pending that long (their job was lost). */
  webhookSweepSeconds: number;
  /** Warm isolates a worker keeps for the next runs of the same agent version (0: a new isolate per run). */
  sandboxWarmContexts: number;
  /**
   * Runs of one caller's agent an isolate of a worker holds at once, in two contexts (context-pool.ts
   * `runsPerIsolate`): they share its heap limit (AGENT_MEMORY_MB), and a run past it ends them all.
   */
  sandboxRunsPerIsolate: number;
  /** Web processes answer short runs themselves (workers/inline-runs.ts) instead of queueing every call. */
  webInlineRuns: boolean;
  /** Undefined outside production when not set: resolved at start-up (see resolveSecrets). */
  sessionSecret: string | undefined;
  secretsKey: string | undefined;
  sessionIdleMinutes: number;
  sessionMaxHours: number;
  emailCodeMinutes: number;
  smtpUrl: string | undefined;
  mailFrom: string;
  allowedOrigins: string[];
  cookieSecure: boolean;
  /** Behind a reverse proxy: take the client address from X-Forwarded-For (its last entry) and the scheme from X-Forwarded-Proto. */
  trustProxy: boolean;
  /** Failed logins from one client address per 15 minutes before it is answered 429. */
  loginIpMaxFailures: number;
  convWaitMs: number;
  streamReplaySeconds: number;
  /** How long a worker's lock on a running job lasts unrenewed: a dead worker's runs end `unexpected` after about this long. */
  jobLockMs: number;
  bodyLimitBytes: number;
  /** Default limits per caller (DESIGN §16), overridden per account by an admin; 0 = no limit. */
  runsPerMinute: number;
  runsInFlight: number;
  logLevel: string;
  /** The agent the web app's search box runs (the user's text goes to its inputs.query). */
  defaultAgent: string;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const int = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.string().trim().regex(/^\d+$/, 'must be a whole number').transform(Number).pipe(z.number().min(min).max(max));

/** DATABASE_PREPARED_STATEMENTS: named prepared statements always, never, or until the connection shows it cannot keep them. */
export type PreparedStatements = boolean | 'auto';

const bool = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => ['true', 'false', '1', '0', 'yes', 'no'].includes(v), 'must be true or false')
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const preparedStatements = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => ['auto', 'true', 'false', '1', '0', 'yes', 'no'].includes(v), 'must be auto, true or false')
  .transform((v): PreparedStatements => (v === 'auto' ? 'auto' : v === 'true' || v === '1' || v === 'yes'));

const list = z
  .string()
  .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean));

const url = (protocols: string[]) =>
  z
    .string()
    .trim()
    .refine((v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    }, `must be a URL (${protocols.join(' or ')})`);

/** One Redis URL, or several comma-separated (the nodes of a cluster). */
const redisUrls = z
  .string()
  .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean))
  .pipe(z.array(url(['redis:', 'rediss:'])).min(1, 'must name at least one node'))
  .transform((urls) => urls.join(','));

const secret = z.string().min(32, 'must be at least 32 characters');

/** Each variable with its parser; undefined means "not set, use the default". */
const variables = {
  NODE_ENV: z.string(),
  PORT: int(0, 65535),
  DATABASE_URL: url(['postgres:', 'postgresql:']),
  REDIS_URL: redisUrls,
  REDIS_CLUSTER: bool,
  REDIS_SHARDS: int(1, 64),
  QUEUE_PREFIX: z.string().regex(/^[A-Za-z0-9_{}.-]{1,64}$/, 'must be 1-64 letters, digits, _ - . { }'),
  WORKER_CONCURRENCY: int(1, 100_000),
  DATABASE_POOL_SIZE: int(2, 1000),
  DATABASE_PREPARED_STATEMENTS: preparedStatements,
  WORKER_MEMORY_MB: int(128),
  MAX_AGENT_RUNTIME_MS: int(100),
  AGENT_MEMORY_MB: int(8, 4096),
  AGENT_CPU_MS: int(10),
  AGENT_THREAD_NICE: int(0, 19),
  AGENT_HTTP_ALLOW: list,
  WEBHOOK_ALLOW: list,
  WEBHOOK_SWEEP_SECONDS: int(1, 86_400),
  SANDBOX_WARM_CONTEXTS: int(0, 100_000),
  SANDBOX_RUNS_PER_ISOLATE: int(1, 1024),
  WEB_INLINE_RUNS: bool,
  SESSION_SECRET: secret,
  SECRETS_KEY: secret,
  SESSION_IDLE_MINUTES: int(1),
  SESSION_MAX_HOURS: int(1),
  EMAIL_CODE_MINUTES: int(1, 1440),
  SMTP_URL: url(['smtp:', 'smtps:']),
  MAIL_FROM: z.string().min(3),
  ALLOWED_ORIGINS: list,
  COOKIE_SECURE: bool,
  TRUST_PROXY: bool,
  LOGIN_IP_MAX_FAILURES: int(1),
  CONV_WAIT_MS: int(0),
  STREAM_REPLAY_SECONDS: int(1),
  JOB_LOCK_MS: int(1000),
  BODY_LIMIT_BYTES: int(1024),
  RUNS_PER_MINUTE: int(0),
  RUNS_IN_FLIGHT: int(0),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  DEFAULT_AGENT: z.string().trim().regex(agentNamePattern, 'must be an agent name (a letter, then up to 63 letters, digits, _ or -)'),
} as const;

type Name = keyof typeof variables;
type Parsed = { [K in Name]?: z.output<(typeof variables)[K]> };

/** Parses the environment (process.env by default). Throws ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed: Parsed = {};
  const problems: string[] = [];
  for (const name of Object.keys(variables) as Name[]) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const result = variables[name].safeParse(raw);
    if (result.success) (parsed as Record<string, unknown>)[name] = result.data;
    else problems.push(`${name}: ${result.error.issues.map((i) => i.message).join(', ')}`);
  }
  const nodeEnv = parsed.NODE_ENV ?? 'development';
  if (nodeEnv === 'production') {
    for (const name of ['SESSION_SECRET', 'SECRETS_KEY', 'SMTP_URL'] as const) {
      if (!parsed[name]) problems.push(`${name}: required when NODE_ENV=production`);
    }
  }
  if (parsed.REDIS_URL?.includes(',') && !parsed.REDIS_CLUSTER) problems.push('REDIS_URL: names several nodes, which needs REDIS_CLUSTER=true');
  if (problems.length) throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);

  const maxAgentRuntimeMs = parsed.MAX_AGENT_RUNTIME_MS ?? 60_000;
  return {
    nodeEnv,
    port: parsed.PORT ?? 3000,
    databaseUrl: parsed.DATABASE_URL ?? 'postgres://127.0.0.1:5432/agentexec',
    redisUrl: parsed.REDIS_URL ?? 'redis://127.0.0.1:6379',
    redisCluster: parsed.REDIS_CLUSTER ?? false,
    queuePrefix: keyPrefix(parsed.QUEUE_PREFIX ?? 'agentexec', parsed.REDIS_CLUSTER ?? false),
    redisShards: parsed.REDIS_SHARDS ?? 1,
    workerConcurrency: parsed.WORKER_CONCURRENCY ?? 1000,
    databasePoolSize: parsed.DATABASE_POOL_SIZE ?? 10,
    databasePreparedStatements: parsed.DATABASE_PREPARED_STATEMENTS ?? 'auto',
    workerMemoryMb: parsed.WORKER_MEMORY_MB ?? 2048,
    maxAgentRuntimeMs,
    agentMemoryMb: parsed.AGENT_MEMORY_MB ?? 64,
    agentCpuMs: parsed.AGENT_CPU_MS ?? 10_000,
    agentThreadNice: parsed.AGENT_THREAD_NICE ?? 19,
    agentHttpAllow: parsed.AGENT_HTTP_ALLOW ?? [],
    webhookAllow: parsed.WEBHOOK_ALLOW ?? [],
    webhookSweepSeconds: parsed.WEBHOOK_SWEEP_SECONDS ?? 60,
    // As many as the runs a worker holds: a burst of runs ending together leaves them all warm for the next.
    sandboxWarmContexts: parsed.SANDBOX_WARM_CONTEXTS ?? parsed.WORKER_CONCURRENCY ?? 1000,
    sandboxRunsPerIsolate: parsed.SANDBOX_RUNS_PER_ISOLATE ?? 64,
    webInlineRuns: parsed.WEB_INLINE_RUNS ?? true,
    sessionSecret: parsed.SESSION_SECRET,
    secretsKey: parsed.SECRETS_KEY,
    sessionIdleMinutes: parsed.SESSION_IDLE_MINUTES ?? 30,
    sessionMaxHours: parsed.SESSION_MAX_HOURS ?? 12,
    emailCodeMinutes: parsed.EMAIL_CODE_MINUTES ?? 10,
    smtpUrl: parsed.SMTP_URL,
    mailFrom: parsed.MAIL_FROM ?? 'agentexec <no-reply@localhost>',
    allowedOrigins: parsed.ALLOWED_ORIGINS ?? [],
    cookieSecure: parsed.COOKIE_SECURE ?? true,
    trustProxy: parsed.TRUST_PROXY ?? false,
    loginIpMaxFailures: parsed.LOGIN_IP_MAX_FAILURES ?? 30,
    convWaitMs: parsed.CONV_WAIT_MS ?? maxAgentRuntimeMs,
    streamReplaySeconds: parsed.STREAM_REPLAY_SECONDS ?? 300,
    jobLockMs: parsed.JOB_LOCK_MS ?? 30_000,
    bodyLimitBytes: parsed.BODY_LIMIT_BYTES ?? 1_048_576,
    runsPerMinute: parsed.RUNS_PER_MINUTE ?? 0,
    runsInFlight: parsed.RUNS_IN_FLIGHT ?? 5000,
    logLevel: parsed.LOG_LEVEL ?? 'info',
    defaultAgent: parsed.DEFAULT_AGENT ?? 'hello',
  };
}

/** QUEUE_PREFIX as keys use it: on a cluster with a hash tag (DESIGN §17, BullMQ's "prefix: '{myprefix}'"). */
function keyPrefix(prefix: string, cluster: boolean): string {
  return cluster && !hasHashTag(prefix) ? `{${prefix}}` : prefix;
}

/** Redis's rule: the part between the first `{` and the next `}`, when not empty, is what a key is hashed by. */
function hasHashTag(key: string): boolean {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1;
}
