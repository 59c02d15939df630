import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';

export interface Environment {
  node: string;
  cpuCount: number;
  cpuModel: string;
  date: string;
  gitCommit: string | null;
  profile: string;
}

/** Where and when the bench ran. */
export function describeEnvironment(profile: string, cwd: string): Environment {
  const cpuList = cpus();
  return {
    node: process.version,
    cpuCount: cpuList.length,
    cpuModel: cpuList[0]?.model.trim() ?? 'unknown',
    date: new Date().toISOString(),
    gitCommit: gitCommit(cwd),
    profile,
  };
}

function gitCommit(cwd: string): string | null {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}
