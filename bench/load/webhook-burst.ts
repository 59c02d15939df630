import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Db } from '../../db/database.js';
import { createSecretBox } from '../../shared/secret-box.js';
import { generateWebhookSecret, signWebhook } from '../../shared/webhook-signature.js';
import type { ApiClient } from '../client.js';
import { delay } from '../stats.js';

/**
 * The webhook burst of the load test (DESIGN §14): `runs` background runs submitted at once by the
 * load test's account, whose webhook points at a receiver here; the receiver stops (refusing
 * connections) when half the deliveries have arrived and comes back a few seconds later. Every run
 * must end and its webhook arrive, correctly signed, exactly once by webhook-id.
 */
export interface BurstReport {
  runs: number;
  accepted: number;
  delivered: number;
  duplicates: number;
  badSignatures: number;
  seconds: number;
  receiverDownSeconds: number;
}

export async function runWebhookBurst(options: { clients: ApiClient[]; db: Db; secretsKey: string; runs: number; maxSeconds: number; log: (line: string) => void }): Promise<BurstReport> {
  const { db, runs, log } = options;
  const secret = generateWebhookSecret();
  const receiver = await startReceiver(secret);
  try {
    const account = await db.selectFrom('service_accounts').select('id').where('name', '=', 'bench').executeTakeFirstOrThrow();
    await db
      .insertInto('webhooks')
      .values({ service_account_id: account.id, url: receiver.url, sealed_secret: createSecretBox(options.secretsKey).seal(secret) })
      .onConflict((oc) => oc.column('service_account_id').doUpdateSet({ url: receiver.url }))
      .execute();
    const started = performance.now();
    let accepted = 0;
    let next = 0;
    const submitter = async (client: ApiClient) => {
      while (next < runs) {
        next += 1;
        const answer = await client.post('/api/exec/submit', { agentName: 'ltCounter', inputs: { query: `burst ${next}` } });
        if (answer.status === 202) accepted += 1;
        else log(`  submit answered ${answer.status}: ${answer.text.slice(0, 200)}`);
      }
    };
    // 64 at a time over the web processes: a burst as fast as they accept it.
    await Promise.all(Array.from({ length: 64 }, (_, i) => submitter(options.clients[i % options.clients.length]!)));
    log(`  ${accepted} of ${runs} background runs accepted in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    let downFor = 0;
    const deadline = performance.now() + options.maxSeconds * 1000;
    let restarted = false;
    while (receiver.ids.size < accepted && performance.now() < deadline) {
      if (!restarted && receiver.ids.size >= accepted / 2) {
        restarted = true;
        const downAt = performance.now();
        log(`  ${receiver.ids.size} delivered: the receiver stops for 3 s`);
        await receiver.stop();
        await delay(3000);
        await receiver.start();
        downFor = (performance.now() - downAt) / 1000;
      }
      await delay(200);
    }
    // Anything delivered twice would come in just after the last one: give it a moment.
    await delay(1000);
    return {
      runs,
      accepted,
      delivered: receiver.ids.size,
      duplicates: receiver.received - receiver.ids.size,
      badSignatures: receiver.badSignatures,
      seconds: (performance.now() - started) / 1000,
      receiverDownSeconds: downFor,
    };
  } finally {
    await receiver.stop();
  }
}

async function startReceiver(secret: string) {
  const state = { ids: new Set<string>(), received: 0, badSignatures: 0 };
  let server: Server | undefined;
  let port = 0;
  const start = async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const id = String(req.headers['webhook-id']);
        const timestamp = Number(req.headers['webhook-timestamp']);
        if (req.headers['webhook-signature'] !== signWebhook(secret, id, timestamp, body)) state.badSignatures += 1;
        state.received += 1;
        state.ids.add(id);
        res.writeHead(204).end();
      });
    });
    server.keepAliveTimeout = 1000;
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  };
  await start();
  return {
    get ids() {
      return state.ids;
    },
    get received() {
      return state.received;
    },
    get badSignatures() {
      return state.badSignatures;
    },
    url: `http://127.0.0.1:${port}/webhooks`,
    start,
    /** Stops taking connections; requests already in let finish, so each one counted was answered. */
    async stop() {
      const closing = server;
      server = undefined;
      if (!closing) return;
      closing.closeIdleConnections();
      await new Promise<void>((resolve) => closing.close(() => resolve()));
    },
  };
}
