import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createDb, type Db } from '../../db/database.js';
import type { UsageRecord } from '../../db/usage.repository.js';
import { createLogger } from '../../shared/logger.js';
import { createUsageRecorder } from '../../server/usage/usage-recorder.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { testEnv } from '../helpers/test-env.js';
import { waitFor } from '../helpers/wait.js';
import { usageRowsOf, waitForUsageRows } from './report-helpers.js';

describe('usage recorder', () => {
  let proxy: TcpProxy;
  let db: Db;
  let viaProxy: Db;
  const logLines: string[] = [];
  const logger = createLogger('warn', { write: (line: string) => void logLines.push(line) });

  before(async () => {
    const url = new URL(testEnv.DATABASE_URL!);
    proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    db = createDb(testEnv.DATABASE_URL!, 1);
    viaProxy = createDb(url.toString(), 1);
  });
  after(async () => {
    await viaProxy.destroy();
    await db.destroy();
    await proxy.close();
  });

  const row = (accountId: string, endpoint: string): UsageRecord => ({
    serviceAccountId: accountId,
    name: 'recorder-test',
    role: 'user',
    endpoint,
    agentName: null,
    resultCode: null,
    httpStatus: 200,
    durationMs: 1,
    at: new Date(),
  });

  it('writes as soon as a batch of rows waits, without waiting for the timer', async () => {
    const recorder = createUsageRecorder(db, logger, { flushEveryMs: 60_000, batchRows: 20 });
    const accountId = randomUUID();
    try {
      for (let i = 0; i < 20; i++) recorder.record(row(accountId, `/e${i}`));
      const rows = await waitForUsageRows(db, [accountId], 20, 2000);
      assert.equal(rows.length, 20);
    } finally {
      await recorder.close();
    }
  });

  it('keeps the rows of a failed write and writes them once the database is back', async () => {
    const recorder = createUsageRecorder(viaProxy, logger, { flushEveryMs: 50 });
    const accountId = randomUUID();
    await proxy.cut();
    try {
      for (let i = 0; i < 3; i++) recorder.record(row(accountId, `/before-${i}`));
      await waitFor(() => logLines.some((l) => l.includes('usage records not written')), 5000, 'a failed write');
      recorder.record(row(accountId, '/during'));
      await proxy.restore();
      const rows = await waitForUsageRows(db, [accountId], 4);
      assert.deepEqual(rows.map((r) => r.endpoint).sort(), ['/before-0', '/before-1', '/before-2', '/during']);
    } finally {
      await proxy.restore();
      await recorder.close();
    }
  });

  it('keeps at most maxBufferedRows while the database refuses, dropping the oldest with a warning', async () => {
    const recorder = createUsageRecorder(viaProxy, logger, { flushEveryMs: 50, maxBufferedRows: 3 });
    const accountId = randomUUID();
    await proxy.cut();
    try {
      for (let i = 0; i < 5; i++) recorder.record(row(accountId, `/call-${i}`));
      await waitFor(() => logLines.some((l) => l.includes('usage records dropped') && l.includes('"dropped":2')), 5000, 'the drop warning');
      await proxy.restore();
      const rows = await waitForUsageRows(db, [accountId], 3);
      assert.deepEqual(rows.map((r) => r.endpoint).sort(), ['/call-2', '/call-3', '/call-4']);
    } finally {
      await proxy.restore();
      await recorder.close();
    }
  });

  it('writes everything buffered on close, long before its timer', async () => {
    const recorder = createUsageRecorder(db, logger, { flushEveryMs: 60_000 });
    const accountId = randomUUID();
    for (let i = 0; i < 5; i++) recorder.record(row(accountId, `/close-${i}`));
    await recorder.close();
    assert.equal((await usageRowsOf(db, [accountId])).length, 5);
  });
});
