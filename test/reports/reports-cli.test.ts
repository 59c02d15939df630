import assert from 'node:assert/strict';
import { execAgent, post } from '../helpers/api.js';
import { createAccount, publishAgent, uniqueAgentName } from '../helpers/fixtures.js';
import { runCli } from '../helpers/processes.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { utcDay, waitForUsageRows } from './report-helpers.js';

describe('command line: reports', () => {
  let stack: Stack;
  let account: { name: string; key: string; id: string };
  let failedConvid: string;
  let since: string;
  const failer = uniqueAgentName('failer');

  before(async () => {
    stack = await startStack();
    await publishAgent(stack.runtime.db, failer, `export default async (sys) => { sys.fail('gave up on purpose'); }`);
    account = await createAccount(stack.runtime.db, 'developer');
    since = new Date().toISOString();
    failedConvid = (await execAgent(stack.url, account.key, { agentName: failer })).body.convid;
    await post(stack.url, '/api/user/getUserProfile', {}, { key: account.key });
    await waitForUsageRows(stack.runtime.db, [account.id], 2);
  });
  after(() => stack.close());

  it('reports:usage --json prints the totals and the rows of the range', async () => {
    const res = await runCli(['reports:usage', '--since', since, '--json']);
    assert.equal(res.code, 0, res.output);
    assert.equal(res.json.since, since);
    assert.equal(res.json.truncated, false);
    const rows = res.json.rows.filter((r: any) => r.serviceAccountId === account.id);
    const totals = res.json.totals.filter((t: any) => t.serviceAccountId === account.id);
    assert.deepEqual(totals, [{ serviceAccountId: account.id, name: account.name, role: 'developer', day: utcDay(rows[0].at), calls: 2, failed: 1 }]);
    assert.deepEqual(
      rows.map((r: any) => [r.name, r.role, r.endpoint, r.agentName, r.resultCode, r.httpStatus]),
      [
        [account.name, 'developer', '/api/user/getUserProfile', null, null, 200],
        [account.name, 'developer', '/api/exec/execAgent', failer, 'failCommand', 200],
      ],
    );
  });

  it('reports:usage prints a table of totals, then the rows', async () => {
    const res = await runCli(['reports:usage', '--since', since]);
    assert.equal(res.code, 0, res.output);
    const lines = res.output.split('\n');
    const totalsHeader = lines.findIndex((l) => /^day\s+account\s+role\s+calls\s+failed$/.test(l));
    const rowsHeader = lines.findIndex((l) => /^at\s+account\s+role\s+endpoint\s+agent\s+result\s+status\s+ms$/.test(l));
    assert.ok(totalsHeader >= 0 && rowsHeader > totalsHeader, res.output);
    assert.ok(lines.slice(totalsHeader, rowsHeader).some((l) => l.includes(account.name) && /developer\s+2\s+1$/.test(l)), res.output);
    assert.ok(lines.slice(rowsHeader).some((l) => l.includes(account.name) && l.includes(failer) && l.includes('failCommand')), res.output);
  });

  it('reports:errors prints the failed runs with their message, as a table or --json', async () => {
    const json = await runCli(['reports:errors', '--since', since, '--json']);
    assert.equal(json.code, 0, json.output);
    const row = json.json.rows.find((r: any) => r.convid === failedConvid);
    assert.equal(row?.resultCode, 'failCommand');
    assert.equal(row?.message, 'gave up on purpose');
    assert.equal(row?.principalId, account.id);
    const text = await runCli(['reports:errors', '--since', since]);
    assert.equal(text.code, 0, text.output);
    assert.ok(text.output.split('\n').some((l) => l.includes(failer) && l.includes('failCommand') && l.includes('gave up on purpose')), text.output);
  });

  it('refuses a --since that is not a date, or after --until', async () => {
    const bad = await runCli(['reports:usage', '--since', 'yesterday']);
    assert.equal(bad.code, 1);
    assert.match(bad.output, /--since must be an ISO date-time/);
    const reversed = await runCli(['reports:errors', '--since', '2025-02-01T00:00:00Z', '--until', '2025-01-01T00:00:00Z']);
    assert.equal(reversed.code, 1);
    assert.match(reversed.output, /--since must not be after --until/);
  });
});
