import Router from '@koa/router';
import { passwordHelp } from '../../shared/password-rules.js';
import type { WebDeps } from '../deps.js';
import { requireSameOrigin } from '../middleware/same-origin.js';
import { validateBody } from '../validate-body.js';
import { createPasswordBody, emailCodeBody, emptyBody, loginBody } from './auth.schemas.js';
import { createPasswordWithEmailCode, requestEmailCode } from './email-code.service.js';
import { login, prepareDecoyHash } from './login.service.js';
import { clearSessionCookie, readSessionCookie, setSessionCookie } from './session-cookie.js';
import { endSession } from './sessions.js';

/** /api/auth/*: the browser's sign-in calls (DESIGN §3). None needs a credential; all must come from our origin. */
export function authRoutes(deps: WebDeps): Router {
  const router = new Router({ prefix: '/api/auth' });
  router.use(requireSameOrigin(deps.config));
  void prepareDecoyHash();

  router.post('/login', async (ctx) => {
    const { email, password } = validateBody(loginBody, ctx);
    const signedIn = await login(deps, { email, password, ip: ctx.ip, previousCookie: readSessionCookie(ctx, deps.config) });
    setSessionCookie(ctx, deps.config, signedIn.cookie);
    ctx.body = { user: signedIn.user };
  });

  router.post('/logout', async (ctx) => {
    validateBody(emptyBody, ctx);
    const cookie = readSessionCookie(ctx, deps.config);
    const ended = cookie ? await endSession(deps, cookie) : undefined;
    if (ended) deps.logger.info({ event: 'logout', sessionId: ended, ip: ctx.ip }, 'signed out');
    clearSessionCookie(ctx, deps.config);
    ctx.body = {};
  });

  router.post('/emailCode', async (ctx) => {
    const { email } = validateBody(emailCodeBody, ctx);
    await requestEmailCode(deps, email, ctx.ip);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {};
  });

  router.post('/createPasswordWithEmailCode', async (ctx) => {
    const body = validateBody(createPasswordBody, ctx);
    await createPasswordWithEmailCode(deps, { ...body, ip: ctx.ip });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {};
  });

  router.post('/getPasswordHelp', (ctx) => {
    validateBody(emptyBody, ctx);
    ctx.body = passwordHelp();
  });

  return router;
}
