import { fileURLToPath } from 'node:url';
import { createClient } from '../client.js';
import { coresOver, cpuBetween, readCpu, type CpuReading } from '../cpu.js';
import { freePort, spawnNode, waitUntilHealthy, type ProductProcess } from '../stack.js';
import { driveClients, relayFigures, streamedCall, type ClientTiming } from './calls.js';

/**
 * A relay floor for `bench:io --stream --floors`: what this machine does, in the same run, with the same
 * upstream, clients and window, when the processes between them do nothing but relay (relay-floor-process.ts).
 * The product's token relay then reads as a ratio to it, as `npm run bench` reads the product against a raw
 * BullMQ round trip: the machine's speed, which swings from day to day, divides out.
 * - `direct`: one process between upstream and client (the least any design can have).
 * - `pubsub`: a front process, a Redis list and a runner process, the tokens published back through Redis:
 *   the product's topology (web, queue, worker, pub/sub) without its work.
 */
export type RelayFloorKind = 'direct' | 'pubsub';

export const relayFloorKinds: readonly RelayFloorKind[] = ['direct', 'pubsub'];

export interface RelayFloor {
  kind: RelayFloorKind;
  baseUrl: string;
  /** Its processes, the one taking calls last. */
  processes: ProductProcess[];
  stop(): Promise<string>;
}

const entry = fileURLToPath(new URL('./relay-floor-process.js', import.meta.url));

export async function startRelayFloor(kind: RelayFloorKind, settings: { upstream: string; redisUrl: string; prefix: string }): Promise<RelayFloor> {
  const port = String(await freePort());
  const env = { PATH: process.env.PATH ?? '' };
  const redis = ['--redis', settings.redisUrl, '--prefix', `${settings.prefix}:floor`];
  const run = (name: string, args: string[]) => spawnNode(name, [entry, ...args], env);
  const processes =
    kind === 'direct'
      ? [run('floor-direct', ['--role', 'direct', '--port', port, '--upstream', settings.upstream])]
      : [run('floor-runner', ['--role', 'runner', '--upstream', settings.upstream, ...redis]), run('floor-front', ['--role', 'front', '--port', port, ...redis])];
  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = async () => (await Promise.all(processes.map((p) => p.stop(5_000).then((how) => `${p.name} ${how}`)))).join(', ');
  try {
    await waitUntilHealthy(baseUrl, processes, 15_000);
  } catch (err) {
    await stop();
    throw err;
  }
  return { kind, baseUrl, processes, stop };
}

/** A floor's figures over the same window as the product's. */
export interface RelayFloorReading {
  runsPerSecond: number;
  tokenRelayMs: { tokens: number; p50: number; p99: number; max: number };
  firstTokenRelayMs: { answers: number; p50: number; p99: number; max: number };
  /** Cores each of its processes used in the window (by name), this process and the whole machine. */
  cpuCores: Record<string, number>;
  errors: number;
  firstErrors: string[];
}

/**
 * Starts the floor, runs `clients` clients against it exactly as against the product (`driveClients`,
 * `streamedCall`), and stops it.
 */
export async function measureRelayFloor(
  kind: RelayFloorKind,
  settings: { upstream: string; redisUrl: string; prefix: string; clients: number; timing: ClientTiming },
): Promise<RelayFloorReading> {
  const floor = await startRelayFloor(kind, settings);
  const client = createClient(floor.baseUrl, { bearerKey: 'none', maxSockets: settings.clients + 16 });
  try {
    const pids = floor.processes.map((p) => p.pid);
    let atStart: CpuReading | undefined;
    const callers = Array.from({ length: settings.clients }, (_, i) => String(i));
    const run = await driveClients(callers, () => streamedCall(client, settings.upstream), settings.timing, { atStart: () => (atStart = readCpu(pids)) });
    const used = atStart ? cpuBetween(atStart, readCpu(pids)) : null;
    return {
      runsPerSecond: Math.round((run.completed / (settings.timing.durationMs / 1000)) * 10) / 10,
      tokenRelayMs: { tokens: run.relayMs.length, ...relayFigures(run.relayMs) },
      firstTokenRelayMs: { answers: run.firstTokenRelayMs.length, ...relayFigures(run.firstTokenRelayMs) },
      cpuCores: used
        ? { ...Object.fromEntries(floor.processes.map((p, i) => [p.name, coresOver(used, used.processMs[i]!)])), bench: coresOver(used, used.ownMs), machine: coresOver(used, used.machineMs) }
        : {},
      errors: run.errors.length,
      firstErrors: [...new Set(run.errors)].slice(0, 5),
    };
  } finally {
    client.close();
    await floor.stop();
  }
}
