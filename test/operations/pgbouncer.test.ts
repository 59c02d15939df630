import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { createDb, executePrepared, namesPreparedStatements } from '../../db/database.js';
import { findConversation } from '../../db/conversations.repository.js';
import { execAgent, post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.js';
import { runCli, spawnEntry, freePort, waitForOutput, type Spawned } from '../helpers/processes.js';
import { openStream } from '../helpers/sse.js';
import { testEnv } from '../helpers/test-env.js';
import { waitFor } from '../helpers/wait.js';

/**
 * A web and a worker process whose every PostgreSQL connection goes through PgBouncer 1.18 in
 * transaction mode, as Debian ships it (DESIGN §17): no startup options, and named prepared statements
 * given up at the first sign that the pooler cannot keep them (DATABASE_PREPARED_STATEMENTS `auto`).
 */
describe('through PgBouncer in transaction mode', function () {
  this.timeout(60_000);
  const databaseName = new URL(testEnv.DATABASE_URL!).pathname.slice(1);
  const db = createDb(testEnv.DATABASE_URL!, 2);
  let bouncer: PgBouncer;
  let bouncedUrl: string;
  let url: string;
  let receiver: Server;
  const received: Array<{ runId: string; resultCode: string }> = [];
  const processes: Spawned[] = [];
  let key: string;
  /** A service account with a webhook: its background runs' ends are POSTed to `receiver`. */
  let webhookKey: string;
  const counter = uniqueAgentName('counter');
  const sayer = uniqueAgentName('sayer');
  const asker = uniqueAgentName('asker');
  const spinner = uniqueAgentName('spinner');

  /** PgBouncer's count of transactions it passed on for this run's database. */
  const transactionsPassed = async () => {
    const row = (await bouncer.admin('SHOW STATS')).find((r) => r.database === databaseName);
    return Number(row?.total_xact_count ?? 0);
  };

  before(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const { data } = JSON.parse(body) as { data: { runId: string; response: { resultCode: string } } };
        received.push({ runId: data.runId, resultCode: data.response.resultCode });
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const receiverPort = (receiver.address() as AddressInfo).port;

    bouncer = await startPgBouncer();
    bouncedUrl = bouncer.urlFor(testEnv.DATABASE_URL!);
    key = (await createAccount(db)).key;
    await publishAgent(db, counter, `export default async (sys) => { sys.vars.n = (sys.vars.n ?? 0) + 1; sys.say('n=' + sys.vars.n); }`);
    await publishAgent(db, sayer, `export default async (sys) => { sys.say('one'); await sys.sleep(50); sys.say('two'); }`);
    await publishAgent(db, asker, `export default async (sys) => { const { name } = await sys.ask({ message: 'Name?', inputs: [{ name: 'name', type: 'str' }] }); sys.vars.name = name; sys.say('hello ' + name); }`);
    await publishAgent(db, spinner, `export default async (sys) => { sys.vars.spun = true; sys.say('spinning'); for (;;) {} }`);

    const env = { DATABASE_URL: bouncedUrl, DATABASE_POOL_SIZE: '4', WEBHOOK_ALLOW: `127.0.0.1:${receiverPort}` };
    const port = String(await freePort());
    url = `http://127.0.0.1:${port}`;
    processes.push(spawnEntry('cli/web.js', [], { ...env, PORT: port }), spawnEntry('workers/main.js', [], { ...env, WORKER_CONCURRENCY: '4' }));
    await Promise.all([waitForOutput(processes[0]!, /web listening/), waitForOutput(processes[1]!, /worker running/)]);

    // The webhook is set with the command line, itself through PgBouncer (it migrates first, as every command does).
    const account = await createAccount(db);
    const set = await runCli(['webhooks:set', '--name', account.name, '--url', `http://127.0.0.1:${receiverPort}/hooks`, '--json'], { ...env });
    assert.equal(set.code, 0, set.output);
    webhookKey = account.key;
  });

  after(async () => {
    for (const p of processes) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await bouncer?.stop();
    await db.destroy();
    receiver.close();
  });

  it('answers calls, new conversations and existing ones, keeping every run', async () => {
    const before = await transactionsPassed();
    const first = await execAgent(url, key, { agentName: counter });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(first.body.output, [{ type: 'text', text: 'n=1' }]);
    // Several new conversations at once: their first runs are written together.
    const news = await Promise.all(Array.from({ length: 6 }, () => execAgent(url, key, { agentName: counter })));
    assert.deepEqual(news.map((r) => r.body.output?.[0]?.text), Array(6).fill('n=1'));
    for (let n = 2; n <= 4; n++) {
      const next = await execAgent(url, key, { agentName: counter, convid: first.body.convid });
      assert.deepEqual(next.body.output, [{ type: 'text', text: `n=${n}` }]);
    }
    const kept = await findConversation(db, first.body.convid);
    assert.deepEqual(kept?.agent_vars[counter], { n: 4 });
    assert.equal(kept?.history.length, 4);
    assert.ok((await transactionsPassed()) > before, 'PgBouncer passed the calls’ transactions on');
  });

  it('streams a call', async () => {
    const stream = await openStream(url, '/api/exec/execAgent', { agentName: sayer, stream: true }, { key });
    const events = await stream.done;
    assert.deepEqual(events.map((e) => e.event), ['start', 'part', 'part', 'end']);
    assert.equal(events.at(-1)!.data.resultCode, 'success');
  });

  it('pauses at an ask and resumes with the answer', async () => {
    const asked = await execAgent(url, key, { agentName: asker });
    assert.equal(asked.body.resultCode, 'ask');
    assert.equal(asked.body.askInput.message, 'Name?');
    const answered = await execAgent(url, key, { agentName: asker, convid: asked.body.convid, inputs: { name: 'Ada' } });
    assert.equal(answered.body.resultCode, 'success');
    assert.deepEqual(answered.body.output, [{ type: 'text', text: 'hello Ada' }]);
    assert.deepEqual((await findConversation(db, asked.body.convid))?.agent_vars[asker], { name: 'Ada' });
  });

  it('cancels a running call, keeping nothing of it', async () => {
    const first = await execAgent(url, key, { agentName: counter });
    const stream = await openStream(url, '/api/exec/execAgent', { agentName: spinner, convid: first.body.convid, stream: true }, { key });
    await stream.next((e) => e.event === 'part');
    assert.deepEqual((await post(url, '/api/exec/cancel', { convid: first.body.convid }, { key })).body, { cancelled: true });
    assert.equal((await stream.next((e) => e.event === 'end')).data.resultCode, 'stopped');
    assert.equal((await findConversation(db, first.body.convid))?.agent_vars[spinner], undefined);
    const after = await execAgent(url, key, { agentName: counter, convid: first.body.convid });
    assert.deepEqual(after.body.output, [{ type: 'text', text: 'n=2' }]);
  });

  it('runs a background submission and delivers its webhook', async () => {
    const submitted = await post(url, '/api/exec/submit', { agentName: counter }, { key: webhookKey });
    assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
    await waitFor(() => received.some((r) => r.runId === submitted.body.runId), 20_000, 'the webhook delivery');
    assert.deepEqual(received.find((r) => r.runId === submitted.body.runId), { runId: submitted.body.runId, resultCode: 'success' });
  });

  it('migrates a new database from three processes at once, one after the other, leaving no migration lock held', async () => {
    const fresh = new URL(testEnv.DATABASE_URL!);
    fresh.pathname = `/${databaseName}_migrated`;
    const env = { DATABASE_URL: bouncer.urlFor(fresh.toString()) };
    try {
      const runs = await Promise.all([0, 1, 2].map(() => runCli(['migrate', '--json'], env)));
      for (const run of runs) assert.equal(run.code, 0, run.output);
      const applied = runs.map((run) => run.json.applied as string[]);
      assert.equal(applied.filter((names) => names.length > 0).length, 1, 'one process applied the migrations, the others found them applied');
      const { rows } = await sql<{ locks: number }>`select count(*)::int as locks from pg_locks where locktype = 'advisory' and database = (select oid from pg_database where datname = ${fresh.pathname.slice(1)})`.execute(db);
      assert.equal(rows[0]!.locks, 0);
    } finally {
      await sql`drop database if exists ${sql.id(fresh.pathname.slice(1))} with (force)`.execute(db);
    }
  });

  it('gives up named prepared statements at the first one the pooler loses, and no statement fails for it', async () => {
    const bounced = createDb(bouncedUrl, 4);
    try {
      assert.equal(namesPreparedStatements(bounced), true, 'named by default');
      // Four at a time: their transactions take different server connections, so a connection's
      // statement prepared on one server connection is soon bound on another.
      for (let round = 0; round < 50 && namesPreparedStatements(bounced); round++) {
        await Promise.all([1, 2, 3, 4].map((n) => executePrepared(bounced, 'probe', 'select $1::int as n', [n])));
      }
      assert.equal(namesPreparedStatements(bounced), false, 'still naming statements after 200 through PgBouncer 1.18');
      await executePrepared(bounced, 'probe', 'select $1::int as n', [5]);
    } finally {
      await bounced.destroy();
    }
  });

  it('names prepared statements on a direct connection for good', async () => {
    const direct = createDb(testEnv.DATABASE_URL!, 4);
    try {
      for (let round = 0; round < 50; round++) await Promise.all([1, 2, 3, 4].map((n) => executePrepared(direct, 'probe', 'select $1::int as n', [n])));
      assert.equal(namesPreparedStatements(direct), true);
    } finally {
      await direct.destroy();
    }
  });

  it('left both processes’ clients on PgBouncer and nothing in their logs about prepared statements or startup parameters', async () => {
    const clients = (await bouncer.admin('SHOW CLIENTS')).filter((r) => r.database === databaseName);
    assert.ok(clients.length >= 2, `clients of ${databaseName} on PgBouncer: ${clients.length}`);
    for (const p of processes) assert.doesNotMatch(p.output(), /prepared statement|startup parameter/);
  });
});
