import { build, type Message } from 'esbuild';

/** Where a compile error is, 1-based line and column in the agent's own source. */
export interface CompileError {
  line: number;
  column: number;
  message: string;
}

export type CompileResult =
  | { ok: true; code: string; sourceMap: string }
  | { ok: false; errors: CompileError[] };

/** Name of the global the compiled module assigns its exports to, inside the sandbox. */
export const agentModuleGlobal = '__agentModule';

/**
 * Compiles one TypeScript or JavaScript agent module to a script for the sandbox.
 * Imports cannot be resolved (an agent is one module), so `import x from 'fs'` is a compile error,
 * not a run-time surprise. `import type` is erased and allowed.
 */
export async function compileAgent(source: string, fileName = 'agent.ts'): Promise<CompileResult> {
  try {
    const result = await build({
      stdin: { contents: source, loader: fileName.endsWith('.js') ? 'js' : 'ts', sourcefile: fileName },
      bundle: true,
      write: false,
      format: 'iife',
      globalName: agentModuleGlobal,
      platform: 'neutral',
      target: 'es2022',
      sourcemap: 'external',
      outfile: 'agent.js',
      logLevel: 'silent',
      legalComments: 'none',
    });
    const code = result.outputFiles.find((f) => f.path.endsWith('.js'))?.text ?? '';
    const sourceMap = result.outputFiles.find((f) => f.path.endsWith('.map'))?.text ?? '';
    return { ok: true, code, sourceMap };
  } catch (err) {
    const messages = (err as { errors?: Message[] }).errors;
    if (!Array.isArray(messages)) throw err;
    return { ok: false, errors: messages.map(toCompileError) };
  }
}

function toCompileError(m: Message): CompileError {
  return { line: m.location?.line ?? 1, column: (m.location?.column ?? 0) + 1, message: m.text };
}
