import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { loadConfig } from '../../shared/config.js';
import { createLogger } from '../../shared/logger.js';
import { createSecretBox } from '../../shared/secret-box.js';
import { systemClock } from '../../shared/clock.js';
import { createDb } from '../../db/database.js';
import { startWeb } from '../../server/web.js';
import { execAgent, post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { testEnv } from '../helpers/test-env.js';

describe('HTTP errors (DESIGN §2)', () => {
  let stack: Stack;
  let key: string;
  let agentName: string;

  before(async () => {
    stack = await startStack({ BODY_LIMIT_BYTES: '2048' });
    key = (await createAccount(stack.runtime.db)).key;
    agentName = uniqueAgentName('hello');
    await publishAgent(stack.runtime.db, agentName, `export default async (sys) => sys.say('hi')`);
  });
  after(() => stack.close());

  const countConversations = async () =>
    Number((await sql<{ n: string }>`select count(*) as n from conversations`.execute(stack.runtime.db)).rows[0]!.n);

  function assertErrorBody(body: any, code: string) {
    assert.equal(body.error.code, code);
    assert.equal(typeof body.error.message, 'string');
    assert.ok(body.error.message.length > 0);
    assert.ok(!/at .*\.js:\d+/.test(JSON.stringify(body)), 'no stack trace');
  }

  it('answers 400 invalidRequest naming each wrong field, and changes nothing', async () => {
    const before = await countConversations();
    const res = await execAgent(stack.url, key, { agentName: '9bad name', inputs: 'not an object', stream: 'yes', extra: 1 });
    assert.equal(res.status, 400);
    assertErrorBody(res.body, 'invalidRequest');
    assert.deepEqual(Object.keys(res.body.error.details.fields).sort(), ['agentName', 'extra', 'inputs', 'stream']);
    const missing = await execAgent(stack.url, key, {});
    assert.equal(missing.status, 400);
    assert.ok(missing.body.error.details.fields.agentName);
    const badConvid = await execAgent(stack.url, key, { agentName, convid: 'not-a-uuid' });
    assert.equal(badConvid.status, 400);
    assert.ok(badConvid.body.error.details.fields.convid);
    assert.equal(await countConversations(), before);
  });

  it('answers 400 for a body that is not JSON, or not an object', async () => {
    const broken = await post(stack.url, '/api/exec/execAgent', '{"agentName":', { key });
    assert.equal(broken.status, 400);
    assertErrorBody(broken.body, 'invalidRequest');
    const array = await post(stack.url, '/api/exec/execAgent', '[1,2]', { key });
    assert.equal(array.status, 400);
    assertErrorBody(array.body, 'invalidRequest');
  });

  it('answers 401 unauthenticated without a credential or with a wrong key', async () => {
    const none = await post(stack.url, '/api/exec/execAgent', { agentName });
    assert.equal(none.status, 401);
    assertErrorBody(none.body, 'unauthenticated');
    const forged = await execAgent(stack.url, `ak_0123456789abcdef_${'A'.repeat(43)}`, { agentName });
    assert.equal(forged.status, 401);
    const garbage = await execAgent(stack.url, 'hello', { agentName });
    assert.equal(garbage.status, 401);
  });

  it('answers 400 when a call carries both a session cookie and a bearer key', async () => {
    const res = await post(stack.url, '/api/exec/execAgent', { agentName }, { key, headers: { Cookie: 'agentexec_session=abc' } });
    assert.equal(res.status, 400);
    assertErrorBody(res.body, 'invalidRequest');
  });

  it('answers 404 notFound for an unknown endpoint', async () => {
    const res = await post(stack.url, '/api/exec/nope', {}, { key });
    assert.equal(res.status, 404);
    assertErrorBody(res.body, 'notFound');
  });

  it('answers 413 payloadTooLarge over the body limit, and changes nothing', async () => {
    const before = await countConversations();
    const res = await execAgent(stack.url, key, { agentName, inputs: { query: 'x'.repeat(4096) } });
    assert.equal(res.status, 413);
    assertErrorBody(res.body, 'payloadTooLarge');
    assert.equal(await countConversations(), before);
  });

  it('answers 415 unsupportedMediaType for a POST that is not JSON', async () => {
    const res = await fetch(`${stack.url}/api/exec/execAgent`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain', Authorization: `Bearer ${key}` },
      body: JSON.stringify({ agentName }),
    });
    assert.equal(res.status, 415);
    assertErrorBody(await res.json(), 'unsupportedMediaType');
  });

  it('echoes a sane X-Request-Id and makes one up otherwise', async () => {
    const given = await execAgent(stack.url, key, { agentName, inputs: {} });
    assert.match(given.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    const echoed = await post(stack.url, '/api/exec/execAgent', { agentName }, { key, headers: { 'X-Request-Id': 'client-req-42' } });
    assert.equal(echoed.headers.get('x-request-id'), 'client-req-42');
  });

  it('answers 503 unavailable at once when PostgreSQL cannot be reached', async () => {
    const config = loadConfig({ ...testEnv, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere' });
    const db = createDb(config.databaseUrl, 1);
    const web = await startWeb({ config, db, logger: createLogger('silent'), box: createSecretBox(config.secretsKey!), clock: systemClock, secrets: { secretsKey: config.secretsKey!, sessionSecret: config.sessionSecret! } }, 0);
    try {
      const started = Date.now();
      const res = await execAgent(`http://127.0.0.1:${web.port}`, key, { agentName });
      assert.equal(res.status, 503);
      assertErrorBody(res.body, 'unavailable');
      assert.ok(Date.now() - started < 5000, 'no hang');
    } finally {
      await web.close();
      await db.destroy();
    }
  });
});
