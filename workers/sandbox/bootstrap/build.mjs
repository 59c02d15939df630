// Bundles the sandbox's bootstrap (workers/sandbox/bootstrap/, type-checked by its own tsconfig) into
// the one script agent-context.ts evaluates in every context. isolated-vm's evalClosure runs it as the
// body of a function whose arguments are $0, $1, $2 (the host's sync and async call references, the
// agent's module factory), and the context keeps what it returns: the function that starts a run.
//
// The bundle is flat, as an ES module bundle is, with its one export turned into that return: an iife
// bundle (esbuild's wrapper and export helpers) costs ~0.2 ms more per context to evaluate. Not
// minified: stack frames inside the isolate keep readable names and lines.
import { build } from 'esbuild';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const outfile = `${root}dist/workers/sandbox/sandbox-bootstrap.js`;

const result = await build({
  absWorkingDir: root,
  entryPoints: ['workers/sandbox/bootstrap/main.ts'],
  tsconfig: 'workers/sandbox/bootstrap/tsconfig.json',
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  // A function body is not a module: say strict, as the modules were written (the lockdown relies on it).
  banner: { js: "'use strict';" },
  legalComments: 'none',
  logLevel: 'warning',
  write: false,
});

const bundle = result.outputFiles[0].text;
const entryExport = /^export \{\n {2}bootstrap\n\};\n/m;
if (bundle.match(new RegExp(entryExport, 'gm'))?.length !== 1) {
  throw new Error('the sandbox bootstrap bundle does not end with its one export (bootstrap/main.ts exports bootstrap only)');
}
mkdirSync(dirname(outfile), { recursive: true });
writeFileSync(outfile, bundle.replace(entryExport, 'return bootstrap($0, $1, $2);\n'));
