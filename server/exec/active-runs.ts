import type { RedisClient } from '../../runs/redis-connection.js';
import { luaScript } from '../../runs/redis-script.js';
import type { Principal } from '../../shared/api.js';
import { activeRunsKey, conversationStreamKey, requestRunKey } from '../../shared/channels.js';

/**
 * The calls each caller has going, by conversation and by request id, so /api/exec/cancel and
 * /api/exec/attach can find them from any web process. Keys are per caller: another caller's lookup
 * finds nothing. Entries are removed when the call ends and expire on their own after `keepMs`
 * (a web process that died cannot remove them).
 */
export interface ActiveRun {
  runId: string;
  convid: string;
  agentName: string;
  caller: Pick<Principal, 'kind' | 'id'>;
  /** The request ids the caller can cancel it by (X-Request-Id, Idempotency-Key). */
  requestIds: string[];
  /** Whether the caller can cancel it by convid (it knows the convid while the call runs). */
  byConversation: boolean;
  /** True when the run's events are logged (it can be attached to). */
  logged: boolean;
}

/** What attach needs about the last logged run of a conversation. */
export interface AttachableRun {
  runId: string;
  agentName: string;
}

/** Whether registering the run is of any use: nothing to register is no Redis command on the call's path. */
export function isFindable(run: ActiveRun): boolean {
  return run.byConversation || run.requestIds.length > 0 || run.logged;
}

/**
 * Registers and unregisters with one script each: unlike a MULTI (a command per key and its EXEC), it
 * is one command, and it rides the connection's auto-pipelining with the call's other commands.
 * KEYS: the conversation's set (when `byConversation`), then the request ids', then (register, when
 * logged) the conversation's attach key.
 */
const registerScript = luaScript(`
local k = 1
if ARGV[3] == '1' then
  redis.call('SADD', KEYS[k], ARGV[1])
  redis.call('PEXPIRE', KEYS[k], ARGV[2])
  k = k + 1
end
for _ = 1, tonumber(ARGV[4]) do
  redis.call('SET', KEYS[k], ARGV[1], 'PX', ARGV[2])
  k = k + 1
end
if ARGV[5] ~= '' then redis.call('SET', KEYS[k], ARGV[5], 'EX', ARGV[6]) end
return 1`);

const unregisterScript = luaScript(`
local k = 1
if ARGV[2] == '1' then
  redis.call('SREM', KEYS[1], ARGV[1])
  k = 2
end
for i = k, #KEYS do redis.call('DEL', KEYS[i]) end
return 1`);

/** The keys that find the run while it lasts: its conversation's set (when `byConversation`), then its request ids'. */
function findingKeys(prefix: string, run: ActiveRun): string[] {
  return [...(run.byConversation ? [activeRunsKey(prefix, run.caller, run.convid)] : []), ...run.requestIds.map((id) => requestRunKey(prefix, run.caller, id))];
}

export async function registerRun(redis: RedisClient, prefix: string, run: ActiveRun, keepMs: number, replaySeconds: number): Promise<void> {
  const streamed = run.logged ? JSON.stringify({ runId: run.runId, agentName: run.agentName } satisfies AttachableRun) : '';
  const keys = [...findingKeys(prefix, run), ...(run.logged ? [conversationStreamKey(prefix, run.caller, run.convid)] : [])];
  await registerScript(redis, keys.length, ...keys, run.runId, keepMs, run.byConversation ? '1' : '0', run.requestIds.length, streamed, replaySeconds);
}

export async function unregisterRun(redis: RedisClient, prefix: string, run: ActiveRun): Promise<void> {
  const keys = findingKeys(prefix, run);
  await unregisterScript(redis, keys.length, ...keys, run.runId, run.byConversation ? '1' : '0');
}

/** The runs a caller has going on a conversation, or the run a request id of theirs started. */
export async function findActiveRuns(
  redis: RedisClient,
  prefix: string,
  caller: Pick<Principal, 'kind' | 'id'>,
  target: { convid: string } | { requestId: string },
): Promise<string[]> {
  if ('convid' in target) return redis.smembers(activeRunsKey(prefix, caller, target.convid));
  const runId = await redis.get(requestRunKey(prefix, caller, target.requestId));
  return runId ? [runId] : [];
}

export async function findStreamedRun(redis: RedisClient, prefix: string, caller: Pick<Principal, 'kind' | 'id'>, convid: string): Promise<AttachableRun | undefined> {
  const text = await redis.get(conversationStreamKey(prefix, caller, convid));
  return text ? (JSON.parse(text) as AttachableRun) : undefined;
}
