import { useMemo, useState } from 'preact/hooks';
import type { ErrorReport, UsageReport } from '../../../clients/typescript/src/index';
import { useDocumentTitle } from '../document-title';
import { BarChart, daysBetween } from './bar-chart';
import { formatTime, useAdmin, useLoaded } from './use-admin';
import { LoadState } from './page-state';

const ranges = [7, 30, 90] as const;
/** Failed runs the page lists under the chart, newest first. */
const newestShown = 20;

/** The console's Reports (DESIGN §7, §18): calls with bearer keys and failed runs per UTC day, as charts and tables. */
export function ReportsView() {
  useDocumentTitle('Reports');
  const admin = useAdmin();
  const [days, setDays] = useState<(typeof ranges)[number]>(30);
  // From the start of the UTC day `days - 1` days ago, so the chart has `days` whole bars.
  const range = useMemo(() => {
    const today = new Date().toISOString().slice(0, 10);
    return { since: new Date(Date.parse(`${today}T00:00:00Z`) - (days - 1) * 86_400_000).toISOString() };
  }, [days]);
  const usage = useLoaded(() => admin.usageReport(range), [range], 'The usage report could not be loaded. Try again.');
  const errors = useLoaded(() => admin.errorReport(range), [range], 'The error report could not be loaded. Try again.');

  return (
    <section aria-labelledby="reports-heading">
      <h1 id="reports-heading">Reports</h1>
      <div class="field range-pick">
        <label for="report-range">Period</label>
        <select id="report-range" value={days} onChange={(e) => setDays(Number(e.currentTarget.value) as (typeof ranges)[number])}>
          {ranges.map((n) => (
            <option key={n} value={n}>
              Last {n} days
            </option>
          ))}
        </select>
      </div>
      <h2>Usage</h2>
      <p class="hint">Calls made with service account keys, per UTC day. Failed: a result other than success or ask, or an HTTP error.</p>
      <LoadState loaded={usage} />
      {usage.value && <Usage report={usage.value} />}
      <h2>Errors</h2>
      <p class="hint">Runs that ended in neither success nor ask (draft validations left out), per UTC day.</p>
      <LoadState loaded={errors} />
      {errors.value && <Errors report={errors.value} />}
    </section>
  );
}

function Usage({ report }: { report: UsageReport }) {
  const perDay = new Map<string, { ok: number; failed: number }>();
  const perAccount = new Map<string, { calls: number; failed: number }>();
  for (const total of report.totals) {
    const day = perDay.get(total.day) ?? { ok: 0, failed: 0 };
    perDay.set(total.day, { ok: day.ok + total.calls - total.failed, failed: day.failed + total.failed });
    const account = perAccount.get(total.name) ?? { calls: 0, failed: 0 };
    perAccount.set(total.name, { calls: account.calls + total.calls, failed: account.failed + total.failed });
  }
  const bars = daysBetween(report.since, report.until).map((day) => ({ label: day, values: [perDay.get(day)?.ok ?? 0, perDay.get(day)?.failed ?? 0] }));
  const calls = [...perAccount.values()].reduce((sum, a) => sum + a.calls, 0);
  return (
    <>
      <BarChart id="usage-chart" caption="Calls per day" summary={`${calls} calls in ${bars.length} days.`} series={['succeeded', 'failed']} bars={bars} />
      {perAccount.size === 0 ? (
        <p>No calls with keys in this period.</p>
      ) : (
        <div class="table-scroll">
          <table class="console-table usage-accounts">
            <caption>Calls per account</caption>
            <thead>
              <tr>
                <th scope="col">Account</th>
                <th scope="col" class="number">
                  Calls
                </th>
                <th scope="col" class="number">
                  Failed
                </th>
              </tr>
            </thead>
            <tbody>
              {[...perAccount.entries()].map(([name, total]) => (
                <tr key={name}>
                  <th scope="row">{name}</th>
                  <td class="number">{total.calls}</td>
                  <td class="number">{total.failed}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

function Errors({ report }: { report: ErrorReport }) {
  const perDay = new Map<string, number>();
  const perCode = new Map<string, number>();
  for (const total of report.totals) {
    perDay.set(total.day, (perDay.get(total.day) ?? 0) + total.count);
    perCode.set(total.resultCode, (perCode.get(total.resultCode) ?? 0) + total.count);
  }
  const bars = daysBetween(report.since, report.until).map((day) => ({ label: day, values: [perDay.get(day) ?? 0] }));
  const failed = [...perCode.values()].reduce((sum, n) => sum + n, 0);
  const byCode = [...perCode.entries()].map(([code, count]) => `${count} ${code}`).join(', ');
  return (
    <>
      <BarChart id="errors-chart" caption="Failed runs per day" summary={failed ? `${failed} failed runs in ${bars.length} days: ${byCode}.` : `No failed runs in ${bars.length} days.`} series={['failed runs']} colors={[1]} bars={bars} />
      {failed === 0 ? (
        <p>No failed runs in this period.</p>
      ) : (
        <div class="table-scroll">
          <table class="console-table error-rows">
            <caption>Newest failed runs</caption>
            <thead>
              <tr>
                <th scope="col">Ended</th>
                <th scope="col">Agent</th>
                <th scope="col">Result</th>
                <th scope="col">Message</th>
              </tr>
            </thead>
            <tbody>
              {report.rows.slice(0, newestShown).map((row) => (
                <tr key={row.executionId}>
                  <td>
                    <time dateTime={row.at}>{formatTime(row.at)}</time>
                  </td>
                  <td>{row.agentName}</td>
                  <td>
                    <span class="run-result-failed">{row.resultCode}</span>
                  </td>
                  <td class="wrap">{row.message ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
