import assert from 'node:assert/strict';
import { createDb, type Db } from '../../db/database.js';
import { execAgent } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { startHealthProbe } from '../helpers/health-probe.js';
import { freePort, spawnEntry, waitForOutput, type Spawned } from '../helpers/processes.js';
import { testEnv } from '../helpers/test-env.js';

/** What one careless or hostile agent does, each found to hurt the service before DESIGN §12's limits. */
const hostileAgents: Record<string, string> = {
  pendingSleeps: `await Promise.all(Array.from({length: 60000}, () => sys.sleep(10000)))`,
  webAssembly: `const m = new WebAssembly.Memory({initial: 1, maximum: 65536}); m.grow(8191); new Uint8Array(m.buffer).fill(1)`,
  heap: `const kept = []; while (true) kept.push(new Array(10000).fill(kept.length))`,
  arrayBuffers: `const kept = []; while (true) kept.push(new Uint8Array(16 * 1024 * 1024).fill(1))`,
  outputFlood: `while (true) sys.say('x'.repeat(4096))`,
  logFlood: `while (true) sys.log('x')`,
  resizableBuffer: `const b = new ArrayBuffer(1, {maxByteLength: 2 ** 31}); b.resize(2 ** 31); new Uint8Array(b).fill(7)`,
  growableSharedBuffer: `const b = new SharedArrayBuffer(1, {maxByteLength: 2 ** 31}); b.grow(2 ** 31); new Uint8Array(b).fill(7)`,
  smallObjects: `const kept = new Map(); for (let i = 0; ; i++) kept.set(i, [i])`,
  promiseLoopAfterReturn: `(function loop() { Promise.resolve().then(loop); })()`,
};

/** 12 distinct CPU-bound agents (an isolate each), and one run 48 times (its isolates shared, up to 8 runs to one, context-pool.ts). */
const busyAgents = 12;
const runsOfOneBusyAgent = 48;

/**
 * DESIGN §12: one run's misbehaviour never stops the service or another caller's runs. Web and worker
 * share one process, as under `npm start`; the test's client is another (reading a 1 MiB answer here
 * would stall the process that probes), and /healthz is probed from a third (health-probe.ts). How
 * fast /healthz and the other caller's hello answer meanwhile is a figure of `npm run bench:hostile`
 * (a ratio to the quiet figures of the same run): asserted here, a wall-clock bound failed on a loaded
 * machine (147 ms). What cannot flake is asserted: every hostile run ends with a code that names what
 * stopped it, every other call succeeds, and /healthz answers throughout.
 */
describe('hostile agents (npm start as its own process)', function () {
  this.timeout(60_000);
  let db: Db;
  let product: Spawned;
  const stack = { url: '' };

  before(async () => {
    db = createDb(testEnv.DATABASE_URL!, 2);
    const port = String(await freePort());
    stack.url = `http://127.0.0.1:${port}`;
    product = spawnEntry('cli/start.js', [], { PORT: port, MAX_AGENT_RUNTIME_MS: '8000', AGENT_CPU_MS: '1000', QUEUE_PREFIX: `${testEnv.QUEUE_PREFIX}-hostile` });
    await waitForOutput(product, /agentexec listening/);
  });

  after(async () => {
    product.child.kill('SIGTERM');
    await product.exited;
    await db.destroy();
  });

  it('end a Map outgrowing the heap errorInAgent (memory), and the process goes on and stops when told', async () => {
    // isolated-vm's out-of-memory handler parks a thread for good: the product ends the run and, on
    // SIGTERM, exits without the exit handler that would wait for that thread (the after hook waits).
    const caller = await createAccount(db, 'user');
    const agentName = uniqueAgentName('map');
    await publishAgent(db, agentName, `export default async function (sys) { ${hostileAgents.smallObjects}; }`);
    const answer = await attack(stack.url, caller.key, agentName);
    assert.equal(answer.resultCode, 'errorInAgent', answer.head);
    assert.match(answer.head, /memory limit exceeded/);
  });

  it("end with their codes while /healthz and another caller's hello keep answering", async () => {
    const attacker = await createAccount(db, 'user');
    const bystander = await createAccount(db, 'user');
    const hello = uniqueAgentName('hello');
    await publishAgent(db, hello, `export default async function (sys) { sys.say('Hello, ' + sys.query); }`);
    assert.equal((await execAgent(stack.url, bystander.key, { agentName: hello, inputs: { query: 'warm' } })).body.resultCode, 'success');
    const hostile: string[] = [];
    for (const [what, body] of Object.entries(hostileAgents)) {
      const agentName = uniqueAgentName(what);
      await publishAgent(db, agentName, `export default async function (sys) { ${body}; sys.say('survived'); }`);
      hostile.push(agentName);
    }
    for (let i = 0; i < busyAgents; i++) {
      const agentName = uniqueAgentName(`busy${i}`);
      await publishAgent(db, agentName, `export default async function (sys) { const mine = ${i}; while (true) {} }`);
      hostile.push(agentName);
    }
    const busy = uniqueAgentName('busy');
    await publishAgent(db, busy, `export default async function (sys) { while (true) {} }`);
    for (let i = 0; i < runsOfOneBusyAgent; i++) hostile.push(busy);

    let attacking = true;
    const healthProbe = await startHealthProbe(stack.url);
    const attacks = Promise.all(hostile.map((agentName) => attack(stack.url, attacker.key, agentName)));
    const helloLatencies: number[] = [];
    const probeHello = (async () => {
      for (let i = 0; attacking; i++) {
        const started = performance.now();
        const res = await execAgent(stack.url, bystander.key, { agentName: hello, inputs: { query: String(i) } });
        helloLatencies.push(performance.now() - started);
        assert.equal(res.body.resultCode, 'success');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const answers = await attacks;
    attacking = false;
    const [healthLatencies] = await Promise.all([healthProbe.stop(), probeHello]);

    for (const [i, answer] of answers.entries()) {
      assert.match(answer.resultCode, /^[a-zA-Z]+$/, `${hostile[i]}: ${answer.head}`);
      assert.notEqual(answer.resultCode, 'success', `${hostile[i]} was stopped`);
      assert.notEqual(answer.resultCode, 'unexpected', `${hostile[i]}: ${answer.head}`);
    }
    for (const [i, answer] of answers.entries()) {
      if (hostile[i]!.includes('busy')) assert.match(answer.head, /CPU time \(AGENT_CPU_MS\)|kept it busy/, `${hostile[i]}: ${answer.head}`);
    }
    assert.ok(healthLatencies.length > 10 && helloLatencies.length > 10, 'probed throughout');
  });
});

/**
 * An attack's execAgent answer, of which only the head is decoded (the result code comes first): the
 * output flood answers 1 MiB, and parsing it here would stall this process's event loop, which times
 * the probes.
 */
async function attack(url: string, key: string, agentName: string): Promise<{ resultCode: string; head: string }> {
  const res = await fetch(`${url}/api/exec/execAgent`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
    body: JSON.stringify({ agentName, inputs: {} }),
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let head = '';
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    if (head.length < 2048) head += decoder.decode(read.value, { stream: true });
  }
  return { resultCode: /^\{"resultCode":"([^"]*)"/.exec(head)?.[1] ?? '', head: head.slice(0, 500) };
}
