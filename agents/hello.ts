import type { Sys } from './sys';

/** Greets the caller and counts how often it was called in this conversation. */
export default async function hello(sys: Sys) {
  const count = Number(sys.vars.count ?? 0) + 1;
  sys.vars.count = count;
  const who = sys.query?.trim() || 'world';
  sys.say(`Hello, ${who}! (call ${count} in this conversation)`);
}
