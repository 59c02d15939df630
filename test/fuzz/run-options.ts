import type fc from 'fast-check';

/**
 * fast-check settings for the suite: a modest number of runs (each one is a real request), and a failure
 * reproduced by the seed and path fast-check prints: FUZZ_SEED=<seed> FUZZ_PATH=<path> npx mocha ….
 */
export function runOptions<T>(numRuns: number): fc.Parameters<T> {
  const seed = process.env.FUZZ_SEED;
  const path = process.env.FUZZ_PATH;
  return { numRuns, ...(seed ? { seed: Number(seed) } : {}), ...(path ? { path } : {}) };
}
