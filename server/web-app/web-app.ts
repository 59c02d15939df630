import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Context, Middleware } from 'koa';
import serveStatic from 'koa-static';
import type { Logger } from '../../shared/logger.js';
import { htmlSecurityHeaders } from './security-headers.js';

/** Where `npm run build` puts the web app: dist/web, beside dist/server (this file is dist/server/web-app/). */
export const builtWebAppDir = fileURLToPath(new URL('../../web/', import.meta.url));

/** Paths the single-page app never answers: the API, the admin pages and the operations endpoints. */
const notAppPaths = /^\/(?:api|admin)(?:\/|$)|^\/(?:healthz|readyz|metrics)$/;

/** Vite names built files by their content, under /assets/: such a file never changes, so it may be kept for a year. */
const hashedAsset = /^\/assets\/.+-[A-Za-z0-9_-]{8,}\.\w+$/;

/**
 * Serves the built web app (DESIGN §2: the web app's static files are GETs): the files themselves,
 * and index.html for any other GET path outside the API, so the app's own paths (/conversations,
 * /dev/…) load it too. index.html is never cached and carries the app's security headers; it names
 * DEFAULT_AGENT in a meta tag (no inline script: the Content-Security-Policy forbids them).
 * When the app is not built, it answers nothing (the API still works) and says so once in the log.
 */
export function serveWebApp(options: { root?: string; defaultAgent: string; logger: Logger }): Middleware {
  const root = options.root ?? builtWebAppDir;
  const indexPath = `${root}/index.html`;
  if (!existsSync(indexPath)) {
    options.logger.warn({ root }, 'web app not built (npm run build): only the API is served');
    return (_ctx, next) => next();
  }
  // Read and filled in once: the built app does not change while the process runs.
  const indexHtml = fillIndex(readFileSync(indexPath, 'utf8'), options.defaultAgent);
  const files = serveStatic(root, {
    index: false,
    setHeaders(res, path) {
      res.setHeader('X-Content-Type-Options', 'nosniff');
      if (!path.endsWith('.html')) res.setHeader('Cache-Control', 'no-cache');
    },
  });
  return async (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || notAppPaths.test(ctx.path)) return next();
    if (ctx.path !== '/' && ctx.path !== '/index.html') {
      await files(ctx, async () => undefined);
      if (ctx.body != null || ctx.status !== 404) {
        if (hashedAsset.test(ctx.path)) ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
        return;
      }
      // A missing file under /assets/ is a 404, not the app: a stale page asking for an old bundle must fail visibly.
      if (ctx.path.startsWith('/assets/') || /\.\w{1,5}$/.test(ctx.path)) return next();
    }
    sendIndex(ctx, indexHtml);
  };
}

function fillIndex(html: string, defaultAgent: string): string {
  return html.replace('content="%DEFAULT_AGENT%"', `content="${escapeAttribute(defaultAgent)}"`);
}

function sendIndex(ctx: Context, html: string): void {
  ctx.status = 200;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-cache');
  for (const [name, value] of Object.entries(htmlSecurityHeaders)) ctx.set(name, value);
  ctx.body = html;
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}
