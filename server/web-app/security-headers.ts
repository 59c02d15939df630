/**
 * Headers of the web app's HTML page. Scripts only from our own origin (no inline script, no eval), so
 * markup an agent sends that slipped past the client's sanitiser still cannot run code. Styles may be
 * inline: agents' html parts use style attributes, and a style cannot run code. Images may come from
 * anywhere over HTTPS or as data: URLs, because agents' image parts do. The page may not be framed.
 */
const contentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: https:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const htmlSecurityHeaders: Readonly<Record<string, string>> = Object.freeze({
  'Content-Security-Policy': contentSecurityPolicy,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
});
