import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { createRouters } from '../../server/app.js';
import type { WebDeps } from '../../server/deps.js';
import { post, type ApiResponse } from '../helpers/api.js';
import { createBrowser } from '../helpers/browser.js';
import { createAccount, createUser, publishAgent, strongPassword, uniqueAgentName } from '../helpers/fixtures.js';
import { openStream, type SseEvent } from '../helpers/sse.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { isRunActive, waitFor } from '../helpers/wait.js';

type Document = { openapi: string; info: { title: string; version: string }; paths: Record<string, Record<string, any>>; components: any };

describe('/api/openapi.json', () => {
  let stack: Stack;
  let doc: Document;
  let ajv: Ajv2020;
  let userKey: string;
  let adminKey: string;
  const hello = uniqueAgentName('hello');
  const asker = uniqueAgentName('asker');
  const failer = uniqueAgentName('failer');
  const writer = uniqueAgentName('writer');
  const sleeper = uniqueAgentName('sleeper');

  before(async () => {
    stack = await startStack({ CONV_WAIT_MS: '300' });
    userKey = (await createAccount(stack.runtime.db, 'user')).key;
    adminKey = (await createAccount(stack.runtime.db, 'admin')).key;
    await publishAgent(stack.runtime.db, hello, `export default async (sys) => { sys.say('hello'); sys.html('<b>hi</b>'); sys.image('https://example.com/a.png', 'image/png'); }`);
    await publishAgent(stack.runtime.db, asker, `export default async (sys) => { const a = await sys.ask({ message: 'Pick', inputs: [{ name: 'c', type: 'chooseOne', options: [{ value: 'a', label: 'A' }] }, { name: 'n', type: 'str' }] }); sys.say(a.c); }`);
    await publishAgent(stack.runtime.db, failer, `export default async (sys) => { sys.fail('no'); }`);
    await publishAgent(stack.runtime.db, sleeper, `export default async (sys) => { await sys.sleep(1500); }`);
    await publishAgent(stack.runtime.db, writer, `export default async (sys) => { sys.say('a'); sys.write(' b'); sys.write(' c'); sys.html('<i>x</i>'); }`);
    const response = await fetch(`${stack.url}/api/openapi.json`);
    assert.equal(response.status, 200);
    doc = (await response.json()) as Document;
    ajv = new Ajv2020({ strict: true, allErrors: true, validateFormats: false });
    for (const field of ['openapi', 'servers', 'info', 'jsonSchemaDialect', 'paths', 'components']) ajv.addKeyword(field);
    ajv.addSchema(doc, 'openapi.json');
  });
  after(() => stack.close());

  /** The validator of a schema in the document, by its JSON pointer; refs resolve against the whole document. */
  const schemaAt = (...segments: string[]) => {
    const pointer = segments.map((s) => s.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
    const validate = ajv.getSchema(`openapi.json#/${pointer}`);
    assert.ok(validate, `the document has ${segments.join(' ')}`);
    return validate;
  };
  const responseSchema = (path: string, status: number, method = 'post') => schemaAt('paths', path, method, 'responses', String(status), 'content', 'application/json', 'schema');

  /** The response's body is what the document says `path` answers with the response's status. */
  const assertDocumented = (path: string, response: Pick<ApiResponse, 'status' | 'body'>, method = 'post') => {
    const validate = responseSchema(path, response.status, method);
    assert.ok(validate(response.body), `${method} ${path} ${response.status}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(response.body)}`);
  };
  const eventSchema = (name: string) => {
    const index = (doc.components.schemas.StreamEvent.oneOf as any[]).findIndex((branch) => branch.properties.event.const === name);
    assert.ok(index >= 0, `the document has the ${name} event`);
    return schemaAt('components', 'schemas', 'StreamEvent', 'oneOf', String(index), 'properties', 'data', 'contentSchema');
  };
  const assertEventsDocumented = (events: SseEvent[]) => {
    for (const event of events) {
      const validate = eventSchema(event.event);
      assert.ok(validate(event.data), `event ${event.event}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(event.data)}`);
    }
  };
  const get = async (path: string) => {
    const response = await fetch(`${stack.url}${path}`);
    return { status: response.status, body: await response.json() };
  };

  it('is an OpenAPI 3.1 document with a path entry for every POST route under /api', () => {
    assert.match(doc.openapi, /^3\.1\.\d+$/);
    assert.equal(doc.info.title, 'agentexec');
    assert.equal(typeof doc.info.version, 'string');
    const routes = createRouters({ config: stack.config } as WebDeps) // building the routers reads only the configuration
      .flatMap((router) => router.stack)
      .filter((layer) => layer.methods.includes('POST'))
      .map((layer) => String(layer.path))
      .filter((path) => path.startsWith('/api/'));
    assert.ok(routes.length >= 13, `found ${routes.length} POST routes`);
    for (const path of routes) {
      assert.ok(doc.paths[path]?.post, `POST ${path} is not in the document`);
    }
    for (const [path, item] of Object.entries(doc.paths)) {
      if (item.post) assert.ok(routes.includes(path), `the document has POST ${path}, which no router serves`);
    }
    assert.ok(doc.paths['/api/openapi.json']?.get && doc.paths['/healthz']?.get && doc.paths['/admin/queues']?.get);
  });

  it('describes the execution responses: success, ask with askInput, a failure with error', async () => {
    const success = await post(stack.url, '/api/exec/execAgent', { agentName: hello, inputs: { query: 'x', n: [1, { a: null }] } }, { key: userKey });
    assert.equal(success.body.resultCode, 'success');
    assert.equal(success.body.output.length, 3);
    assertDocumented('/api/exec/execAgent', success);
    const ask = await post(stack.url, '/api/exec/execAgent', { agentName: asker }, { key: userKey });
    assert.equal(ask.body.resultCode, 'ask');
    assertDocumented('/api/exec/execAgent', ask);
    const wrongAnswer = await post(stack.url, '/api/exec/execAgent', { agentName: asker, convid: ask.body.convid, inputs: { c: 'z' } }, { key: userKey });
    assert.ok(wrongAnswer.body.error.fields);
    assertDocumented('/api/exec/execAgent', wrongAnswer);
    const failed = await post(stack.url, '/api/exec/execAgent', { agentName: failer }, { key: userKey });
    assert.equal(failed.body.resultCode, 'failCommand');
    assertDocumented('/api/exec/execAgent', failed);
  });

  it('describes the error bodies and their statuses: 400 with details.fields, 401, 403, 404, 415', async () => {
    const invalid = await post(stack.url, '/api/exec/execAgent', { agentName: hello, bogus: 1 }, { key: userKey });
    assert.equal(invalid.status, 400);
    assert.ok(invalid.body.error.details.fields);
    assertDocumented('/api/exec/execAgent', invalid);
    assertDocumented('/api/exec/execAgent', await post(stack.url, '/api/exec/execAgent', { agentName: hello }));
    assertDocumented('/api/admin/usageReport', await post(stack.url, '/api/admin/usageReport', {}, { key: userKey }));
    const unknown = await post(stack.url, '/api/exec/execAgent', { agentName: uniqueAgentName('nobody') }, { key: userKey });
    assert.equal(unknown.body.error.code, 'agentNotFound');
    assertDocumented('/api/exec/execAgent', unknown);
    assertDocumented('/api/conv/pin', await post(stack.url, '/api/conv/pin', { convid: randomUUID(), pinned: true }, { key: userKey }));
    const notJson = await post(stack.url, '/api/exec/execAgent', 'agentName=x', { key: userKey, headers: { 'Content-Type': 'text/plain' } });
    assert.equal(notJson.status, 415);
    assertDocumented('/api/exec/execAgent', notJson);
  });

  it('describes signing in, the profile and password help', async () => {
    const password = strongPassword();
    const user = await createUser(stack.runtime.db, { password });
    const browser = createBrowser(stack.url);
    assertDocumented('/api/auth/getPasswordHelp', await browser.post('/api/auth/getPasswordHelp', {}));
    assertDocumented('/api/auth/login', await browser.post('/api/auth/login', { email: user.email, password: 'not the password at all' }));
    const login = await browser.post('/api/auth/login', { email: user.email, password });
    assert.equal(login.status, 200);
    assertDocumented('/api/auth/login', login);
    const profile = await browser.post('/api/user/getUserProfile', {});
    assert.equal(profile.body.kind, 'user');
    assertDocumented('/api/user/getUserProfile', profile);
    assertDocumented('/api/user/getUserProfile', await post(stack.url, '/api/user/getUserProfile', {}, { key: userKey }));
    assertDocumented('/api/auth/logout', await browser.post('/api/auth/logout', {}));
  });

  it('describes the conversation list, pin and cancel answers', async () => {
    const { body } = await post(stack.url, '/api/exec/execAgent', { agentName: hello, inputs: { query: 'remember me' } }, { key: userKey });
    const pin = await post(stack.url, '/api/conv/pin', { convid: body.convid, pinned: true }, { key: userKey });
    assert.equal(pin.status, 200);
    assertDocumented('/api/conv/pin', pin);
    const list = await post(stack.url, '/api/conv/list', {}, { key: userKey });
    assert.ok(list.body.conversations.some((c: { pinned: boolean; expiresAt: unknown }) => c.pinned && c.expiresAt === null));
    assert.ok(list.body.conversations.some((c: { pinned: boolean }) => !c.pinned));
    assertDocumented('/api/conv/list', list);
    assertDocumented('/api/exec/cancel', await post(stack.url, '/api/exec/cancel', { convid: body.convid }, { key: userKey }));
  });

  it('describes the admin reports, with rows in them', async () => {
    await post(stack.url, '/api/exec/execAgent', { agentName: failer }, { key: adminKey });
    let usage: ApiResponse = { status: 0, headers: new Headers(), body: undefined };
    await waitFor(async () => (usage = await post(stack.url, '/api/admin/usageReport', {}, { key: adminKey })).body.rows.length > 0, 5000, 'usage rows');
    assertDocumented('/api/admin/usageReport', usage);
    const errors = await post(stack.url, '/api/admin/errorReport', {}, { key: adminKey });
    assert.ok(errors.body.rows.length > 0);
    assertDocumented('/api/admin/errorReport', errors);
    const runs = await post(stack.url, '/api/admin/listRuns', { limit: 1 }, { key: adminKey });
    assert.equal(runs.body.runs.length, 1);
    assertDocumented('/api/admin/listRuns', runs);
    const refused = await post(stack.url, '/api/admin/listRuns', { limit: 0 }, { key: adminKey });
    assert.equal(refused.status, 400);
    assertDocumented('/api/admin/listRuns', refused);
    // This test's own run: other tests' rows in the shared database can be newer (some with clocks of their own).
    const mine = await post(stack.url, '/api/admin/listRuns', { agentName: failer, limit: 1 }, { key: adminKey });
    const run = await post(stack.url, '/api/admin/getRun', { runId: mine.body.runs[0].runId }, { key: adminKey });
    assert.equal(run.body.status, 'ended');
    assertDocumented('/api/admin/getRun', run);
    const unknown = await post(stack.url, '/api/admin/getRun', { runId: randomUUID() }, { key: adminKey });
    assert.equal(unknown.status, 404);
    assertDocumented('/api/admin/getRun', unknown);
    assertDocumented('/api/admin/cancelRun', await post(stack.url, '/api/admin/cancelRun', { runId: runs.body.runs[0].runId }, { key: adminKey }));
    const queues = await post(stack.url, '/api/admin/getQueues', {}, { key: adminKey });
    assert.ok(queues.body.workers.length > 0 && queues.body.shards.length > 0);
    assertDocumented('/api/admin/getQueues', queues);
    const paused = await post(stack.url, '/api/admin/pauseQueues', {}, { key: adminKey });
    assert.equal(paused.body.paused, true);
    assertDocumented('/api/admin/pauseQueues', paused);
    assertDocumented('/api/admin/resumeQueues', await post(stack.url, '/api/admin/resumeQueues', {}, { key: adminKey }));
  });

  it('describes the console’s accounts, secrets and webhook endpoints, with entries in them', async () => {
    const call = (path: string, body: unknown) => post(stack.url, `/api/admin/${path}`, body, { key: adminKey });
    const name = `doc-${randomUUID().slice(0, 8)}`;
    const created = await call('createServiceAccount', { name });
    assertDocumented('/api/admin/createServiceAccount', created);
    assertDocumented('/api/admin/createServiceAccount', await call('createServiceAccount', { name }));
    assertDocumented('/api/admin/rotateKey', await call('rotateKey', { name }));
    assertDocumented('/api/admin/setRole', await call('setRole', { name, role: 'developer' }));
    assertDocumented('/api/admin/createUser', await call('createUser', { email: `${name}@example.test` }));
    assertDocumented('/api/admin/setRole', await call('setRole', { email: `${name}@example.test`, role: 'developer' }));
    assertDocumented('/api/admin/listAccounts', await call('listAccounts', {}));
    assert.equal((await call('setSecret', { agentName: hello, key: 'DOC_KEY', value: 'v', forDrafts: true })).status, 200);
    const secrets = await call('listAllSecrets', {});
    assert.ok(secrets.body.secrets.length > 0);
    assertDocumented('/api/admin/listAllSecrets', secrets);

    const account = created.body as { id: string };
    await stack.runtime.db.insertInto('webhooks').values({ service_account_id: account.id, url: 'http://127.0.0.1:9/hooks', sealed_secret: stack.runtime.box.seal('whsec_AAAA') }).execute();
    const delivery = await stack.runtime.db.insertInto('webhook_deliveries').values({ run_id: randomUUID(), service_account_id: account.id }).returning('id').executeTakeFirstOrThrow();
    await stack.runtime.db.insertInto('webhook_attempts').values({ delivery_id: delivery.id, attempt: 1, url: 'http://127.0.0.1:9/hooks', status: null, error: 'connect ECONNREFUSED' }).execute();
    assertDocumented('/api/admin/listWebhooks', await call('listWebhooks', {}));
    const log = await call('listWebhookDeliveries', { name, limit: 1 });
    assert.equal(log.body.deliveries[0].attempts.length, 1);
    assertDocumented('/api/admin/listWebhookDeliveries', log);
    assertDocumented('/api/admin/listWebhookDeliveries', await call('listWebhookDeliveries', { name: 'no-such-account' }));
    assertDocumented('/api/admin/redeliverWebhook', await call('redeliverWebhook', { webhookId: randomUUID() }));
    assertDocumented('/api/admin/deleteServiceAccount', await call('deleteServiceAccount', { name }));
    assertDocumented('/api/admin/deleteServiceAccount', await call('deleteServiceAccount', { name }));
  });

  it('describes /healthz and /readyz', async () => {
    assertDocumented('/healthz', await get('/healthz'), 'get');
    assertDocumented('/readyz', await get('/readyz'), 'get');
  });

  it('describes every event of a streamed run, and of a streamed call refused once its stream had started', async () => {
    for (const [path, body] of [['/api/exec/execAgent', { agentName: writer, stream: true }], ['/api/exec/execAgentStream', { agentName: writer }]] as const) {
      const stream = await openStream(stack.url, path, body, { key: userKey });
      const events = await stream.done;
      assert.deepEqual(events.map((e) => e.event), ['start', 'part', 'delta', 'delta', 'part', 'end'], path);
      assertEventsDocumented(events);
    }
    // A call that waits for its conversation longer than CONV_WAIT_MS is refused with an error event.
    const first = await post(stack.url, '/api/exec/execAgent', { agentName: hello }, { key: userKey });
    const holding = post(stack.url, '/api/exec/execAgent', { agentName: sleeper, convid: first.body.convid }, { key: userKey });
    await waitFor(() => isRunActive(first.body.convid), 5000, 'the sleeper to hold the conversation');
    const refused = await openStream(stack.url, '/api/exec/execAgentStream', { agentName: hello, convid: first.body.convid }, { key: userKey });
    const refusedEvents = await refused.done;
    assert.deepEqual(refusedEvents.map((e) => e.event), ['start', 'error']);
    assert.equal(refusedEvents[1]!.data.error.code, 'conversationBusy');
    assertEventsDocumented(refusedEvents);
    assert.equal((await holding).body.resultCode, 'success');
  });

  it('describes a streamed call refused before its stream: an unknown agent is a 404 with the error body', async () => {
    for (const [path, body] of [['/api/exec/execAgent', { agentName: uniqueAgentName('nobody'), stream: true }], ['/api/exec/execAgentStream', { agentName: uniqueAgentName('nobody') }]] as const) {
      const refused = await openStream(stack.url, path, body, { key: userKey });
      assert.equal(refused.status, 404, path);
      assert.deepEqual(await refused.done, []);
      assert.equal(refused.errorBody.error.code, 'agentNotFound');
      assertDocumented(path, { status: refused.status, body: refused.errorBody });
    }
    const notStreamed = await post(stack.url, '/api/exec/execAgentStream', { agentName: writer, stream: false }, { key: userKey });
    assert.equal(notStreamed.status, 400);
    assert.ok(notStreamed.body.error.details.fields.stream);
    assertDocumented('/api/exec/execAgentStream', notStreamed);
  });

  it('describes the draft endpoints, a validation’s answer and every event of a streamed validation', async () => {
    const developerKey = (await createAccount(stack.runtime.db, 'developer')).key;
    const dev = (path: string, body: unknown) => post(stack.url, `/api/dev/${path}`, body, { key: developerKey });
    const source = `export default async (sys) => { sys.log('hi', 1); sys.vars.n = { a: [1] }; sys.say(String(sys.now() > 0)); }`;
    const saved = await dev('saveDraft', { agentName: uniqueAgentName('draft'), source, validationQuery: 'q' });
    assertDocumented('/api/dev/saveDraft', saved);
    const draftid = saved.body.draftid;
    assertDocumented('/api/dev/getDraft', await dev('getDraft', { draftid }));
    assertDocumented('/api/dev/listAgents', await dev('listAgents', {}));
    const validated = await dev('validateDraftStream', { draftid });
    assert.ok(validated.body.trace.length >= 4);
    assertDocumented('/api/dev/validateDraftStream', validated);
    assertDocumented('/api/dev/publishDraft', await dev('publishDraft', { draftid }));

    const stream = await openStream(stack.url, '/api/dev/validateDraftStream', { draftid, stream: true }, { key: developerKey });
    const events = await stream.done;
    assert.ok(events.filter((e) => e.event === 'trace').length >= 4);
    assert.equal(events.at(-1)!.data.validationSuccess, true);
    assertEventsDocumented(events);

    const broken = await dev('saveDraft', { agentName: uniqueAgentName('broken'), source: 'export default (', validationQuery: '' });
    assertDocumented('/api/dev/saveDraft', broken);
    assertDocumented('/api/dev/publishDraft', await dev('publishDraft', { draftid: broken.body.draftid }));
    assertDocumented('/api/dev/validateDraftStream', await dev('validateDraftStream', { draftid: broken.body.draftid }));
    assertDocumented('/api/dev/getDraft', await dev('getDraft', { draftid: randomUUID() }));
  });

  it('is checked strictly enough to fail: a wrong field, a wrong type or an undocumented status is refused', async () => {
    const { body } = await post(stack.url, '/api/exec/execAgent', { agentName: hello }, { key: userKey });
    const success = responseSchema('/api/exec/execAgent', 200);
    assert.ok(success(body));
    assert.equal(success({ ...body, resultCode: 'fine' }), false);
    assert.equal(success({ ...body, extra: true }), false);
    assert.equal(success({ ...body, output: [{ type: 'text', html: 'x' }] }), false);
    const { convid: _convid, ...withoutConvid } = body;
    assert.equal(success(withoutConvid), false);
    assert.equal(responseSchema('/api/exec/execAgent', 404)({ error: { code: 'notFound', message: 'narrowed to agentNotFound' } }), false);
    assert.equal(eventSchema('delta')({ text: 1 }), false);
    assert.throws(() => assertDocumented('/api/conv/list', { status: 409, body: {} }), /the document has/);
  });
});
