import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const sourceFolders = ['shared', 'db', 'runs', 'server', 'workers', 'cli', 'bench', 'clients/typescript/src', 'web/src', 'test'];
const importPattern = /(?:^|\n)\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.[^'"]+)['"]/g;

/** Every .ts/.tsx source file, with the project files it imports (relative imports, `import type` included). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const visit = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) visit(path);
      else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) graph.set(relative(root, path), importsOf(path));
    }
  };
  for (const folder of sourceFolders) visit(join(root, folder));
  return graph;
}

function importsOf(path: string): string[] {
  const imports: string[] = [];
  for (const [, spec] of readFileSync(path, 'utf8').matchAll(importPattern)) {
    const base = resolve(dirname(path), spec!).replace(/\.js$/, '');
    const found = ['.ts', '.tsx'].map((ext) => base + ext).find((file) => existsSync(file));
    if (found) imports.push(relative(root, found));
  }
  return imports;
}

/** The import cycles of `graph`, each as the files along it (depth-first search, one cycle per back edge). */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const walk = (file: string) => {
    state.set(file, 'open');
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') cycles.push([...path.slice(path.indexOf(next)), next]);
      else if (!state.has(next)) walk(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) walk(file);
  return cycles;
}

describe('the import graph', () => {
  const graph = importGraph();

  it('has no cycle, type-only imports included', () => {
    assert.ok(graph.size > 100, `read ${graph.size} files`);
    assert.deepEqual(cyclesOf(graph).map((cycle) => cycle.join(' -> ')), []);
  });

  it('keeps the worker and the server off the client package’s source, and the client off the rest but shared/', () => {
    const crossings = [...graph].flatMap(([file, imports]) =>
      imports
        .filter((target) =>
          /^(workers|server|runs|db|shared)\//.test(file)
            ? target.startsWith('clients/')
            : file.startsWith('clients/') && !target.startsWith('clients/') && !target.startsWith('shared/'),
        )
        .map((target) => `${file} -> ${target}`),
    );
    assert.deepEqual(crossings, []);
  });
});
