import { readFileSync } from 'node:fs';
import Router from '@koa/router';
import type { WebDeps } from '../deps.js';
import { sessionCookieName } from '../auth/session-cookie.js';
import { buildOpenApiDocument, type OpenApiDocument } from './openapi-document.js';

/** `GET /api/openapi.json`, without authentication: the API's OpenAPI 3.1 document, built on first request and kept. */
export function openApiRoutes(deps: Pick<WebDeps, 'config'>): Router {
  const router = new Router();
  let document: OpenApiDocument | undefined;

  router.get('/api/openapi.json', (ctx) => {
    document ??= buildOpenApiDocument({ version: packageVersion(), sessionCookieName: sessionCookieName(deps.config) });
    ctx.body = document;
  });

  return router;
}

function packageVersion(): string {
  // This file is compiled to dist/server/openapi/, so ../../../ is the repository's root.
  const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return manifest.version;
}
