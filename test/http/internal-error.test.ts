import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { createLogger } from '../../shared/logger.js';
import { renderErrors } from '../../server/middleware/errors.js';

describe('500 internal', () => {
  it('answers a generic body, never the thrown message, SQL or stack, and logs the error', async () => {
    const lines: string[] = [];
    const logger = createLogger('error', { write: (line: string) => void lines.push(line) });
    const app = new Koa();
    app.silent = true;
    app.use(renderErrors(logger));
    app.use(() => {
      throw new Error('select password_hash from users where secret = 42');
    });
    const server = app.listen(0);
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      assert.equal(res.status, 500);
      const body = await res.json();
      assert.deepEqual(body, { error: { code: 'internal', message: 'An internal error occurred.' } });
      assert.equal(lines.length, 1);
      assert.match(lines[0]!, /request failed/);
    } finally {
      server.close();
    }
  });
});
