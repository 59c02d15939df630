import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** The web app: Preact through esbuild's JSX transform, built into dist/web, which the web process serves. */
export default defineConfig({
  root: here('.'),
  base: '/',
  // Files served as they are at the root (the favicon).
  publicDir: here('public'),
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: here('../dist/web'),
    emptyOutDir: true,
    // The polyfill would be an inline script, which the page's Content-Security-Policy forbids.
    modulePreload: { polyfill: false },
    target: 'es2022',
    sourcemap: true,
  },
  logLevel: 'warn',
});
