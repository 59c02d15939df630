import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDb } from '../../db/database.js';
import { execAgent, post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { answerTokens, startLlmServer, usageOf, type LlmServer } from '../helpers/llm-server.js';
import { freePort, runCli, spawnEntry, waitForOutput, type Spawned } from '../helpers/processes.js';
import { openStream } from '../helpers/sse.js';
import { testEnv } from '../helpers/test-env.js';
import { waitFor } from '../helpers/wait.js';

/** A span as the OTLP/HTTP JSON export carries it, its attributes flattened. */
interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
}

const spanKind = { internal: 1, server: 2, client: 3, producer: 4 };

/** An OpenTelemetry collector's OTLP/HTTP endpoint on loopback: keeps every export's body, raw and as spans. */
async function startOtlpReceiver(): Promise<{ server: Server; url: string; bodies: string[]; spans: ExportedSpan[] }> {
  const bodies: string[] = [];
  const spans: ExportedSpan[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !req.headers['content-type']?.includes('json')) return void res.writeHead(415).end();
      bodies.push(body);
      spans.push(...spansOf(JSON.parse(body)));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies, spans };
}

function spansOf(request: any): ExportedSpan[] {
  const spans: ExportedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        const attributes: Record<string, unknown> = {};
        for (const { key, value } of span.attributes ?? []) attributes[key] = value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue;
        spans.push({ ...span, attributes, links: span.links ?? [] });
      }
    }
  }
  return spans;
}

/** A webhook receiver on loopback that answers 200 and keeps each delivery's headers and body. */
async function startWebhookReceiver(): Promise<{ server: Server; url: string; port: number; received: { headers: IncomingHttpHeaders; body: string }[] }> {
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { server, url: `http://127.0.0.1:${port}/hooks`, port, received };
}

/**
 * OpenTelemetry traces (DESIGN §18) of a web and a worker process started as the Procfile starts them,
 * exported to a real OTLP/HTTP receiver started here: one trace per API call with the enqueue as a
 * producer span, each run a trace of its own linked to it, its sys.fetch, asks and commit as children,
 * traceparent on the requests it sends, and no secret or input anywhere in what is exported.
 */
describe('OpenTelemetry traces', function () {
  this.timeout(60_000);
  const db = createDb(testEnv.DATABASE_URL!, 2);
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let hooks: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let llm: LlmServer;
  let web: Spawned;
  let worker: Spawned;
  let url: string;
  let key: string;
  let accountName: string;
  let admin: string;
  const apiKey = `sk-trace-${randomBytes(12).toString('hex')}`;
  const query = `query-${randomBytes(6).toString('hex')}`;
  const pin = `pin-${randomBytes(6).toString('hex')}`;
  const chat = uniqueAgentName('traced-chat');
  const asker = uniqueAgentName('traced-ask');
  const background = uniqueAgentName('traced-bg');

  before(async () => {
    otlp = await startOtlpReceiver();
    hooks = await startWebhookReceiver();
    llm = await startLlmServer();
    const account = await createAccount(db);
    key = account.key;
    accountName = account.name;
    admin = (await createAccount(db, 'admin')).key;
    await publishAgent(
      db,
      chat,
      `export default async (sys) => {
        const response = await sys.fetch(sys.secrets.LLM_BASE_URL + '/chat/completions', {
          method: 'POST', stream: true,
          headers: { authorization: 'Bearer ' + sys.secrets.LLM_API_KEY },
          body: JSON.stringify({ model: 'test-model', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: sys.query }] }),
        });
        await response.relay({ field: 'choices.0.delta.content' });
      }`,
    );
    await publishAgent(
      db,
      asker,
      `export default async (sys) => {
        const { pin } = await sys.ask({ message: 'PIN?', inputs: [{ name: 'pin', type: 'password' }] });
        sys.say('a PIN of ' + pin.length + ' characters');
      }`,
    );
    await publishAgent(db, background, `export default async (sys) => { sys.say('done'); }`);
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      WEBHOOK_ALLOW: `127.0.0.1:${hooks.port}`,
      LOG_LEVEL: 'info',
    };
    web = spawnEntry('cli/web.js', [], { ...env, PORT: String(port) });
    worker = spawnEntry('workers/main.js', [], env);
    await Promise.all([waitForOutput(web, /web listening/), waitForOutput(worker, /worker running/)]);
    for (const [secretKey, value] of [['LLM_BASE_URL', llm.baseUrl], ['LLM_API_KEY', apiKey]]) {
      const set = await post(url, '/api/admin/setSecret', { agentName: chat, key: secretKey, value }, { key: admin });
      assert.equal(set.status, 200, JSON.stringify(set.body));
    }
    const webhook = await runCli(['webhooks:set', '--name', accountName, '--url', hooks.url, '--json'], { WEBHOOK_ALLOW: `127.0.0.1:${hooks.port}` });
    assert.equal(webhook.code, 0, webhook.output);
  });
  after(async () => {
    for (const p of [web, worker]) p?.child.kill('SIGKILL');
    await Promise.all([web, worker].map((p) => p?.exited));
    await db.destroy();
    await llm.close();
    otlp.server.close();
    hooks.server.close();
  });

  /** The run span of `runId`, once exported. */
  async function runSpan(runId: string): Promise<ExportedSpan> {
    const find = () => otlp.spans.find((s) => s.attributes['agentexec.run.id'] === runId && s.name.startsWith('invoke_agent '));
    await waitFor(() => find() !== undefined, 10_000, `the span of run ${runId}`);
    return find()!;
  }

  const inTrace = (traceId: string) => otlp.spans.filter((s) => s.traceId === traceId);
  const traceparentOf = (span: ExportedSpan) => `00-${span.traceId}-${span.spanId}-01`;

  it('traces a streamed call: the call, its enqueue, and the run linked to it with its chat span, commit, PostgreSQL and Redis calls', async () => {
    const stream = await openStream(url, '/api/exec/execAgent', { agentName: chat, inputs: { query }, stream: true }, { key });
    const events = await stream.done;
    assert.equal(events.at(-1)!.data.resultCode, 'success', JSON.stringify(events.at(-1)));
    const runId = stream.headers.get('x-run-id')!;

    const run = await runSpan(runId);
    assert.equal(run.name, `invoke_agent ${chat}`);
    assert.equal(run.parentSpanId ?? '', '', 'the run is a trace of its own');
    assert.equal(run.attributes['gen_ai.operation.name'], 'invoke_agent');
    assert.equal(run.attributes['gen_ai.agent.name'], chat);
    assert.equal(run.attributes['gen_ai.conversation.id'], events[0]!.data.convid);
    assert.equal(run.attributes['agentexec.run.result_code'], 'success');

    // Linked to the producer span of the call's trace, whose root is the call's HTTP server span.
    assert.equal(run.links.length, 1);
    const [link] = run.links;
    await waitFor(() => otlp.spans.some((s) => s.spanId === link!.spanId), 10_000, 'the enqueue span');
    const enqueue = otlp.spans.find((s) => s.spanId === link!.spanId)!;
    assert.equal(enqueue.kind, spanKind.producer);
    assert.equal(enqueue.name, 'send runs');
    assert.notEqual(enqueue.traceId, run.traceId);
    await waitFor(() => inTrace(enqueue.traceId).some((s) => s.kind === spanKind.server), 10_000, 'the call’s server span');
    const server = inTrace(enqueue.traceId).find((s) => s.kind === spanKind.server)!;
    assert.equal(server.parentSpanId ?? '', '');
    assert.equal(server.attributes['http.route'] ?? server.name.split(' ')[1], '/api/exec/execAgent');

    // The chat completion, with its model and the usage the stream's last event reported.
    await waitFor(() => inTrace(run.traceId).some((s) => s.name === 'chat test-model'), 10_000, 'the chat span');
    const chatSpan = inTrace(run.traceId).find((s) => s.name === 'chat test-model')!;
    assert.equal(chatSpan.kind, spanKind.client);
    assert.equal(chatSpan.parentSpanId, run.spanId);
    assert.equal(chatSpan.attributes['gen_ai.request.model'], 'test-model');
    const usage = usageOf(answerTokens(query));
    assert.equal(Number(chatSpan.attributes['gen_ai.usage.input_tokens']), usage.prompt_tokens);
    assert.equal(Number(chatSpan.attributes['gen_ai.usage.output_tokens']), usage.completion_tokens);
    assert.equal(Number(chatSpan.attributes['http.response.status_code']), 200);
    assert.equal(llm.requests.at(-1)!.traceparent, traceparentOf(chatSpan), 'the model got the chat span’s traceparent');

    await waitFor(() => inTrace(run.traceId).some((s) => s.name === 'commit'), 10_000, 'the commit span');
    const dbSystems = () => new Set(inTrace(run.traceId).map((s) => s.attributes['db.system.name'] ?? s.attributes['db.system']));
    await waitFor(() => dbSystems().has('postgresql') && dbSystems().has('redis'), 10_000, 'PostgreSQL and Redis spans in the run’s trace');

    // The worker's log line of the run's end carries the run's trace and span.
    const line = worker.output().split('\n').find((l) => l.includes(runId) && l.includes('"run ended"'));
    assert.ok(line, 'the run’s end logged');
    assert.equal(JSON.parse(line).trace_id, run.traceId);
    assert.equal(JSON.parse(line).span_id, run.spanId);
    // The console's Run page names the same trace.
    const detail = await post(url, '/api/admin/getRun', { runId }, { key: admin });
    assert.equal(detail.body.traceId, run.traceId);
  });

  it('traces an ask and its answer as two runs, the ask a child of the first', async () => {
    const asked = await execAgent(url, key, { agentName: asker });
    assert.equal(asked.body.resultCode, 'ask', JSON.stringify(asked.body));
    const answered = await execAgent(url, key, { agentName: asker, convid: asked.body.convid, inputs: { pin } });
    assert.equal(answered.body.resultCode, 'success', JSON.stringify(answered.body));
    const runOf = (resultCode: string) => otlp.spans.find((s) => s.name === `invoke_agent ${asker}` && s.attributes['gen_ai.conversation.id'] === asked.body.convid && s.attributes['agentexec.run.result_code'] === resultCode);
    await waitFor(() => runOf('ask') !== undefined && runOf('success') !== undefined, 10_000, 'the spans of both runs');
    const [first, second] = [runOf('ask')!, runOf('success')!];
    assert.equal(second.attributes['agentexec.run.result_code'], 'success');
    assert.notEqual(first.traceId, second.traceId);
    await waitFor(() => inTrace(first.traceId).some((s) => s.name === 'ask' && s.parentSpanId === first.spanId), 10_000, 'the ask span');
    // The answer replays the ask from the run's journal: nothing is asked again.
    await waitFor(() => inTrace(second.traceId).some((s) => s.name === 'commit'), 10_000, 'the second run’s commit');
    assert.equal(inTrace(second.traceId).some((s) => s.name === 'ask'), false);

    // The web process tried the first run itself (a new conversation's) and handed it to a worker at
    // its ask: that attempt is no span, the worker's run is the run's one (this agent's only runs are
    // these two). The web process ended the attempt before the call's `send runs` span, so that span's
    // export shows the attempt's would be in by now.
    await waitFor(() => otlp.spans.some((s) => s.spanId === first.links[0]?.spanId), 10_000, 'the first run’s send span');
    const runSpans = otlp.spans.filter((s) => s.name === `invoke_agent ${asker}`);
    assert.deepEqual(runSpans.map((s) => s.attributes['agentexec.run.result_code']).sort(), ['ask', 'success']);
  });

  it('traces a background run’s webhook delivery, which carries its traceparent', async () => {
    const submitted = await post(url, '/api/exec/submit', { agentName: background, inputs: { query } }, { key });
    assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
    const runId = submitted.body.runId as string;
    const delivery = () => hooks.received.find((r) => (JSON.parse(r.body) as { data: { runId: string } }).data.runId === runId);
    await waitFor(() => delivery() !== undefined, 10_000, 'the webhook delivery');
    const run = await runSpan(runId);
    assert.equal(run.attributes['agentexec.run.background'], true);
    const traceparent = delivery()!.headers.traceparent as string;
    assert.match(traceparent, new RegExp(`^00-${run.traceId}-[0-9a-f]{16}-01$`));
    const spanId = traceparent.split('-')[2];
    await waitFor(() => otlp.spans.some((s) => s.spanId === spanId), 10_000, 'the delivery span');
    const post_ = otlp.spans.find((s) => s.spanId === spanId)!;
    assert.equal(post_.kind, spanKind.client);
    assert.equal(post_.attributes['agentexec.request.kind'], 'webhook');
    assert.equal(post_.parentSpanId, run.spanId);
  });

  it('exports no secret, input or password answer in any attribute', () => {
    assert.ok(otlp.bodies.length > 0);
    const exported = otlp.bodies.join('\n');
    for (const value of [apiKey, query, pin, key]) assert.equal(exported.includes(value), false, `${value.slice(0, 9)}… was exported`);
    // The LLM's answer (the output) is not exported either.
    assert.equal(exported.includes('You said'), false);
  });
});
