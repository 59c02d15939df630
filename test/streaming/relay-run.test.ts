import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { Gauge, Registry } from 'prom-client';
import type { LoggedEvent } from '../../shared/events.js';
import type { UnqueuedFollow } from '../../runs/run-events.js';
import type { WebDeps } from '../../server/deps.js';
import { relayRun } from '../../server/exec/exec.stream.js';

/**
 * relayRun (server/exec/exec.stream.ts) with a run followed before it was queued: the events heard
 * before the relay is attached, its end among them, are handed over within relayTo.
 */
describe('relaying a streamed run whose end came before the relay was attached', () => {
  let server: http.Server;
  let url: string;
  const ended: string[] = [];
  let stops = 0;
  const runId = 'run-ended-early';
  const heardEarly: LoggedEvent[] = [
    { runId, id: 2, event: 'delta', data: { text: 'Hello' } } as LoggedEvent,
    { runId, id: 3, event: 'end', data: { resultCode: 'success', convid: 'c1', runId } } as unknown as LoggedEvent,
  ];

  before(async () => {
    const registry = new Registry();
    const deps = { metrics: { openStreams: new Gauge({ name: 'relay_run_test_open_streams', help: 'test', registers: [registry] }) } } as unknown as WebDeps;
    const followed: UnqueuedFollow = {
      subscribed: Promise.resolve(),
      relayTo(handler) {
        for (const event of heardEarly) handler(event);
        return () => void (stops += 1);
      },
      stop: () => undefined,
    };
    const app = new Koa();
    app.use((ctx) => relayRun(deps, ctx, { runId, convid: 'c1', agentName: 'hello' }, 0, () => ended.push(runId), followed));
    server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(() => server.close());

  it('sends start, the events and the end, closes the stream and stops following once', async () => {
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
    const text = await res.text();
    const events = [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    assert.deepEqual(events, ['start', 'delta', 'end']);
    assert.match(text, /"resultCode":"success"/);
    assert.deepEqual(ended, [runId]);
    assert.equal(stops, 1);
  });
});
