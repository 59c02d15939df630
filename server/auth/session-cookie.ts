import type { Context } from 'koa';
import type { Config } from '../../shared/config.js';
import { sessionMaxAgeSeconds } from '../../shared/session-lifetime.js';

type CookieConfig = Pick<Config, 'cookieSecure' | 'sessionMaxHours'>;

/**
 * The session cookie's name: with Secure it carries the `__Host-` prefix, so the browser accepts it
 * only from this host over HTTPS, with Path=/ and no Domain.
 */
export function sessionCookieName(config: Pick<Config, 'cookieSecure'>): string {
  return config.cookieSecure ? '__Host-agentexec_session' : 'agentexec_session';
}

export function readSessionCookie(ctx: Context, config: Pick<Config, 'cookieSecure'>): string | undefined {
  return ctx.cookies.get(sessionCookieName(config)) || undefined;
}

/** Sets the cookie (HttpOnly, SameSite=Lax, Path=/, no Domain, Secure unless COOKIE_SECURE=false); the response is not cached. */
export function setSessionCookie(ctx: Context, config: CookieConfig, value: string): void {
  ctx.append('Set-Cookie', cookie(config, `${sessionCookieName(config)}=${value}`, sessionMaxAgeSeconds(config)));
  ctx.set('Cache-Control', 'no-store');
}

export function clearSessionCookie(ctx: Context, config: CookieConfig): void {
  ctx.append('Set-Cookie', cookie(config, `${sessionCookieName(config)}=`, 0));
  ctx.set('Cache-Control', 'no-store');
}

function cookie(config: CookieConfig, nameValue: string, maxAgeSeconds: number): string {
  return [nameValue, 'Path=/', `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Lax', ...(config.cookieSecure ? ['Secure'] : [])].join('; ');
}
