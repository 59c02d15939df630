import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Answers } from '../../shared/api.js';
import { runSandbox } from '../../workers/sandbox/run-sandbox.js';
import type { JournalEntry, SandboxRun, SandboxTrace } from '../../workers/sandbox/sandbox.types.js';
import { compile, errorOf, makeRun, runAgent, startServer, texts, waitFor, type TestServer } from './sandbox-helpers.js';

/**
 * sys.fetch with `stream: true` (DESIGN §13) against a loopback server whose responses the test
 * writes piece by piece: `/stream/<name>` is held open, `feed(name, text)` writes to it, `finish`
 * ends it, `cut` destroys its socket.
 */
describe('sandbox sys.fetch with stream: true', () => {
  let server: TestServer;
  const streams = new Map<string, ServerResponse>();
  const socketClosedAt = new Map<string, number>();

  before(async () => {
    server = await startServer((req, res) => {
      const path = req.url ?? '/';
      const name = path.startsWith('/stream/') ? path.slice('/stream/'.length) : null;
      if (name === null) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      const socket: Socket = req.socket;
      socket.on('close', () => socketClosedAt.set(name, Date.now()));
      streams.set(name, res);
    });
  });

  after(() => server.close());

  const opened = (name: string) => waitFor(() => streams.has(name), `the request for ${name}`);
  const feed = (name: string, text: string) => streams.get(name)!.write(text);
  const agentFetching = (name: string, rest: string, options = '') =>
    `export default async function (sys) {
      const response = await sys.fetch('${server.origin}/stream/${name}', { stream: true ${options} });
      ${rest}
    }`;
  const allow = { httpAllow: ['127.0.0.1'] };

  it('hands each chunk to the agent as it arrives, before the body ends', async () => {
    const deltas: string[] = [];
    const running = runAgent(agentFetching('tokens', `for await (const chunk of response.body) sys.write(chunk);`), { ...allow, ...collectWrites(deltas) });
    await opened('tokens');
    feed('tokens', 'Hel');
    await waitFor(() => deltas.join('') === 'Hel', 'the first chunk written by the agent');
    feed('tokens', 'lo ✓');
    await waitFor(() => deltas.join('') === 'Hello ✓', 'the second chunk');
    streams.get('tokens')!.end('!');
    const outcome = await running;
    assert.equal(outcome.resultCode, 'success');
    assert.deepEqual(texts(outcome), ['Hello ✓!']);
  });

  it('parses server-sent events split anywhere across chunks, skipping comments', async () => {
    const running = runAgent(
      agentFetching('events', `sys.say(response.status + ' ' + response.headers['content-type']); for await (const e of response.events()) sys.say(JSON.stringify(e));`),
      allow,
    );
    await opened('events');
    for (const piece of [': keep-alive\n\nda', 'ta: {"a":1}\r', '\n\r\nevent: done\nid: 7\ndata: x\ndata: y\n', '\n']) feed('events', piece);
    streams.get('events')!.end();
    const outcome = await running;
    assert.deepEqual(texts(outcome), [
      '200 text/event-stream',
      JSON.stringify({ event: 'message', data: '{"a":1}', id: '' }),
      JSON.stringify({ event: 'done', data: 'x\ny', id: '7' }),
    ]);
  });

  it('journals every chunk read, so a run resumed after an ask replays them without a request', async () => {
    const source = agentFetching(
      'replayed',
      `const parts = [];
      for await (const chunk of response.body) { parts.push(chunk); sys.write(chunk); }
      const { ok } = await sys.ask({ message: 'More?', inputs: [{ name: 'ok', type: 'str' }] });
      sys.say(parts.join('|') + ' ' + ok);`,
    );
    const code = await compile(source);
    const deltas: string[] = [];
    const first = runSandbox(makeRun(code, { ...allow, ...collectWrites(deltas) }));
    await opened('replayed');
    feed('replayed', 'a');
    await waitFor(() => deltas.length === 1, 'the first chunk');
    feed('replayed', 'b');
    await waitFor(() => deltas.length === 2, 'the second chunk');
    streams.get('replayed')!.end();
    const paused = await first;
    assert.equal(paused.resultCode, 'ask');
    if (paused.resultCode !== 'ask') return;
    const fetchEntry = paused.journal[0] as Extract<JournalEntry, { op: 'fetch' }>;
    assert.deepEqual(fetchEntry.stream, { chunks: ['a', 'b'], end: 'done' });

    const hits = server.hits();
    const replayedDeltas: string[] = [];
    const resumed = await runSandbox(makeRun(code, { ...allow, journal: answered(paused.journal, { ok: 'yes' }), ...collectWrites(replayedDeltas) }));
    assert.equal(resumed.resultCode, 'success');
    assert.deepEqual(texts(resumed), ['a|b yes']);
    assert.equal(server.hits(), hits, 'the resumed run sends no request');
    assert.deepEqual(replayedDeltas, ['a|b yes'], 'what was written before the ask is not written again');
  });

  it('relays the string at a field of each event to the caller as it arrives, and answers with all of it', async () => {
    const deltas: string[] = [];
    const traced: SandboxTrace[] = [];
    const running = runAgent(
      agentFetching('relayed', `const text = await response.relay({ field: 'choices.0.delta.content' }); sys.say('[' + text + ']');`),
      { ...allow, ...collectWrites(deltas), onTrace: (event) => traced.push(event) },
    );
    await opened('relayed');
    const token = (content: unknown) => `data: ${JSON.stringify({ choices: [{ delta: { content } }] })}\n\n`;
    feed('relayed', token('Hel'));
    await waitFor(() => deltas.join('') === 'Hel', 'the first token written before the body ends');
    // Split across chunks, an event without the field, and one whose field is not a string: the last two are skipped.
    feed('relayed', `${token('lo').slice(0, 9)}`);
    feed('relayed', `${token('lo').slice(9)}data: {"choices":[{"delta":{}}]}\n\n${token(7)}`);
    await waitFor(() => deltas.join('') === 'Hello', 'the token split across chunks');
    streams.get('relayed')!.end(`${token(' ✓')}data: [DONE]\n\n`);
    const outcome = await running;
    assert.equal(outcome.resultCode, 'success');
    assert.deepEqual(texts(outcome), ['Hello ✓', '[Hello ✓]']);
    const writes = traced.flatMap((event) => (event.kind === 'call' && event.name === 'write' ? [event.args] : []));
    assert.deepEqual(writes, [{ text: 'Hel' }, { text: 'lo' }, { text: ' ✓' }], 'a traced run shows each relayed piece as a write');
  });

  it('relays the body as it comes without a field, replays it from the journal after an ask, and refuses bad options', async () => {
    const source = agentFetching(
      'relayed-raw',
      `const text = await response.relay();
      const { ok } = await sys.ask({ message: 'More?', inputs: [{ name: 'ok', type: 'str' }] });
      for (const options of [{ field: 'a..b' }, 'choices.0.delta.content']) {
        try { await (await sys.fetch('${server.origin}/stream/never', { stream: true })).relay(options); } catch (err) { sys.say(err.name + ': ' + err.message); }
      }
      sys.say(text + ' ' + ok);`,
    );
    const code = await compile(source);
    const deltas: string[] = [];
    const first = runSandbox(makeRun(code, { ...allow, ...collectWrites(deltas) }));
    await opened('relayed-raw');
    feed('relayed-raw', 'a');
    await waitFor(() => deltas.join('') === 'a', 'the first chunk');
    streams.get('relayed-raw')!.end('b');
    const paused = await first;
    assert.equal(paused.resultCode, 'ask');
    if (paused.resultCode !== 'ask') return;
    assert.deepEqual((paused.journal[0] as Extract<JournalEntry, { op: 'fetch' }>).stream, { chunks: ['a', 'b'], end: 'done' });

    const hits = server.hits();
    const replayedDeltas: string[] = [];
    const resumed = await runSandbox(makeRun(code, { ...allow, journal: answered(paused.journal, { ok: 'yes' }), ...collectWrites(replayedDeltas) }));
    assert.equal(resumed.resultCode, 'success');
    assert.equal(server.hits(), hits + 2, 'the replayed stream sends no request (the two are the new fetches)');
    const refused = [
      'TypeError: relay: field must be a dot path of up to 200 characters, such as "choices.0.delta.content"',
      'TypeError: relay: options must be an object such as { field: "choices.0.delta.content" }',
    ];
    assert.deepEqual(texts(resumed), [...refused, 'ab yes']);
    assert.deepEqual(replayedDeltas, [...refused, 'ab yes'], 'what was relayed before the ask is not written again');
  });

  for (const [name, reading] of [
    ['cancelled', `for await (const chunk of response.body) sys.write(chunk);`],
    ['cancelled-relay', `await response.relay();`],
  ] as const) {
    it(`closes the upstream connection within 100 ms of the run being cancelled (${reading})`, async () => {
      const controller = new AbortController();
      const deltas: string[] = [];
      const running = runAgent(agentFetching(name, reading), { ...allow, signal: controller.signal, ...collectWrites(deltas) });
      await opened(name);
      feed(name, 'token');
      await waitFor(() => deltas.length === 1, 'the first chunk');
      const cancelledAt = Date.now();
      controller.abort();
      const outcome = await running;
      assert.equal(outcome.resultCode, 'stopped');
      await waitFor(() => socketClosedAt.has(name), 'the upstream socket to close', 100);
      assert.ok(socketClosedAt.get(name)! - cancelledAt <= 100);
    });
  }

  it('closes the connection when the agent leaves the loop early, freeing its fetch slot', async () => {
    const names = Array.from({ length: 16 }, (_, i) => `slot-${i}`);
    const running = runAgent(
      `export default async function (sys) {
        const open = ${JSON.stringify(names)}.map((name) => sys.fetch('${server.origin}/stream/' + name, { stream: true }));
        const [first] = await Promise.all(open);
        for await (const chunk of first.body) { sys.say(chunk); break; }
        const extra = await sys.fetch('${server.origin}/stream/slot-extra', { stream: true });
        sys.say(await extra.text());
      }`,
      allow,
    );
    for (const name of names) await opened(name);
    feed('slot-0', 'first');
    await waitFor(() => socketClosedAt.has('slot-0'), 'the connection the agent left to close');
    await opened('slot-extra');
    streams.get('slot-extra')!.end('seventeenth');
    const outcome = await running;
    assert.deepEqual(texts(outcome), ['first', 'seventeenth']);
    await waitFor(() => names.every((name) => socketClosedAt.has(name)), 'the streams never read to close with the run');
  });

  it('ends callFailed when the server cuts the stream, unless the agent catches it', async () => {
    const written: string[] = [];
    const uncaught = runAgent(agentFetching('cut', `for await (const chunk of response.body) sys.write(chunk);`), { ...allow, ...collectWrites(written) });
    await opened('cut');
    feed('cut', 'partial');
    await waitFor(() => written.length === 1, 'the first chunk');
    streams.get('cut')!.socket!.destroy();
    const failed = await uncaught;
    assert.equal(failed.resultCode, 'callFailed');
    assert.match(errorOf(failed).message, /sys\.fetch GET .*\/stream\/cut failed: connection closed before the response ended/);
    assert.deepEqual(texts(failed), ['partial'], 'the text that came before the cut was read');

    const caughtWritten: string[] = [];
    const caught = runAgent(
      agentFetching('cut-caught', `try { for await (const chunk of response.body) sys.write(chunk); } catch (err) { sys.say('caught ' + err.name); }`),
      { ...allow, ...collectWrites(caughtWritten) },
    );
    await opened('cut-caught');
    feed('cut-caught', 'partial');
    await waitFor(() => caughtWritten.length === 1, 'the first chunk');
    streams.get('cut-caught')!.socket!.destroy();
    const handled = await caught;
    assert.equal(handled.resultCode, 'success');
    assert.deepEqual(texts(handled), ['partial', 'caught FetchError']);
  });

  it('fails a read that waits longer than timeoutMs for the next chunk', async () => {
    const running = runAgent(agentFetching('idle', `for await (const chunk of response.body) sys.write(chunk);`, ', timeoutMs: 150'), allow);
    await opened('idle');
    feed('idle', 'one');
    const outcome = await running;
    assert.equal(outcome.resultCode, 'callFailed');
    assert.match(errorOf(outcome).message, /failed: no data for 150 ms$/);
    await waitFor(() => socketClosedAt.has('idle'), 'the upstream socket to close');
  });

  it('gives each read its own timeoutMs: a stream longer than it, its chunks never that far apart, is read to the end', async () => {
    const written: string[] = [];
    const running = runAgent(agentFetching('steady', `for await (const chunk of response.body) sys.write(chunk);`, ', timeoutMs: 400'), { ...allow, ...collectWrites(written) });
    await opened('steady');
    const chunks = Array.from({ length: 12 }, (_, i) => `c${i} `);
    const started = performance.now();
    for (const chunk of chunks) {
      feed('steady', chunk);
      await waitFor(() => written.length > chunks.indexOf(chunk), `chunk ${chunk} to be read`);
      await sleep(50);
    }
    streams.get('steady')!.end();
    const outcome = await running;
    assert.ok(performance.now() - started > 400, 'the stream outlasted one timeoutMs');
    assert.equal(outcome.resultCode, 'success');
    assert.deepEqual(written, chunks);
  });

  it('counts every chunk against the 5 MiB body limit', async () => {
    const running = runAgent(agentFetching('huge', `let n = 0; for await (const chunk of response.body) n += chunk.length; sys.say(String(n));`), allow);
    await opened('huge');
    const chunk = 'x'.repeat(64 * 1024);
    const res = streams.get('huge')!;
    let sent = 0;
    while (sent <= 6 * 1024 * 1024 && !res.destroyed) {
      if (!res.write(chunk)) await drainedOrClosed(res);
      sent += chunk.length;
    }
    const outcome = await running;
    assert.equal(outcome.resultCode, 'callFailed');
    assert.match(errorOf(outcome).message, /response body larger than 5242880 bytes/);
  });

  it('cannot read, after the resume, a stream left open at an ask', async () => {
    const source = agentFetching(
      'open-at-ask',
      `const it = response.body[Symbol.asyncIterator]();
      sys.say((await it.next()).value);
      await sys.ask({ message: 'Go on?', inputs: [{ name: 'ok', type: 'str' }] });
      try { await it.next(); } catch (err) { sys.say(err.message); }`,
    );
    const code = await compile(source);
    const first = runSandbox(makeRun(code, allow));
    await opened('open-at-ask');
    feed('open-at-ask', 'head');
    const paused = await first;
    assert.equal(paused.resultCode, 'ask');
    if (paused.resultCode !== 'ask') return;
    await waitFor(() => socketClosedAt.has('open-at-ask'), 'the connection to close with the paused run');
    const resumed = await runSandbox(makeRun(code, { ...allow, journal: answered(paused.journal, { ok: 'y' }) }));
    assert.equal(resumed.resultCode, 'success');
    assert.match(texts(resumed)[0]!, /the stream closed when the run paused for an ask/);
  });
});

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done).off('close', done);
      resolve();
    };
    res.on('drain', done).on('close', done);
  });
}

/** Collects the text the agent writes, as new parts and as appends to the last one. */
function collectWrites(into: string[]): Pick<SandboxRun, 'onPart' | 'onDelta'> {
  return {
    onPart: (part) => void (part.type === 'text' && into.push(part.text)),
    onDelta: (text) => void into.push(text),
  };
}

function answered(journal: JournalEntry[], answers: Answers): JournalEntry[] {
  const last = journal[journal.length - 1] as Extract<JournalEntry, { op: 'ask' }>;
  return [...journal.slice(0, -1), { ...last, answers }];
}
