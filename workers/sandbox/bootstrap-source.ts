import { readFileSync } from 'node:fs';

const bundle = new URL('./sandbox-bootstrap.js', import.meta.url);

/**
 * The sandbox's bootstrap (bootstrap/main.ts), as `npm run build` bundled it: the body of a closure
 * agent-context.ts evaluates once per context with `evalClosure`, whose `$0`, `$1`, `$2` are the
 * host's sync and async call references and the agent's module factory. It returns the StartRun.
 */
export const bootstrapSource = readBundle();

function readBundle(): string {
  try {
    return readFileSync(bundle, 'utf8');
  } catch (err) {
    throw new Error(`the sandbox bootstrap is not built (${bundle.pathname}): run npm run build`, { cause: err });
  }
}
