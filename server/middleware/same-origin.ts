import type { Context, Middleware } from 'koa';
import type { Config } from '../../shared/config.js';
import { AppError } from '../../shared/errors.js';

/**
 * CSRF defence for browser calls (DESIGN §3): the request must come from this server's own origin or one
 * in ALLOWED_ORIGINS. `Sec-Fetch-Site: same-origin` proves it; otherwise the `Origin` header must name
 * an allowed origin. A request with neither header is refused (every current browser sends one).
 */
export function isFromAllowedOrigin(ctx: Context, allowedOrigins: readonly string[]): boolean {
  if (ctx.get('Sec-Fetch-Site') === 'same-origin') return true;
  const origin = ctx.get('Origin');
  if (!origin || origin === 'null') return false;
  return origin === `${ctx.protocol}://${ctx.host}` || allowedOrigins.includes(origin);
}

export function assertFromAllowedOrigin(ctx: Context, allowedOrigins: readonly string[]): void {
  if (!isFromAllowedOrigin(ctx, allowedOrigins)) {
    throw new AppError('forbidden', 'This call must come from the web app’s own origin (or one in ALLOWED_ORIGINS).');
  }
}

/** The origins of ALLOWED_ORIGINS in the form browsers send (`scheme://host[:port]`, no path or slash). */
export function normalizeOrigins(origins: readonly string[]): string[] {
  return origins.map((o) => {
    try {
      return new URL(o).origin;
    } catch {
      return o;
    }
  });
}

/** Refuses POSTs from other origins (for endpoints a browser calls before it has a session). */
export function requireSameOrigin(config: Pick<Config, 'allowedOrigins'>): Middleware {
  const allowed = normalizeOrigins(config.allowedOrigins);
  return async (ctx, next) => {
    if (ctx.method === 'POST') assertFromAllowedOrigin(ctx, allowed);
    await next();
  };
}
