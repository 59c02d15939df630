/** One bar: its label (a day) and a value per series, stacked from the bottom in series order. */
export interface Bar {
  label: string;
  values: number[];
}

const width = 720;
const height = 220;
const plot = { left: 44, right: 8, top: 12, bottom: 28 };

/**
 * A stacked bar chart in SVG, drawn here (no chart library): one bar per label, a series per colour
 * (classes chart-series-0, -1, …, or those `colors` names per series), the largest total on the axis. For assistive technology it is an
 * image named by `caption` whose bars each carry a title with their numbers; `summary` describes it.
 */
export function BarChart(props: { id: string; caption: string; summary: string; series: string[]; bars: Bar[]; colors?: number[] }) {
  const { id, caption, summary, series, bars, colors = series.map((_, s) => s) } = props;
  const totals = bars.map((bar) => bar.values.reduce((sum, v) => sum + v, 0));
  const max = Math.max(1, ...totals);
  const plotWidth = width - plot.left - plot.right;
  const plotHeight = height - plot.top - plot.bottom;
  const slot = plotWidth / Math.max(1, bars.length);
  const barWidth = Math.max(2, slot * 0.7);
  const y = (value: number) => plot.top + plotHeight - (value / max) * plotHeight;
  const labelled = new Set([0, Math.floor((bars.length - 1) / 2), bars.length - 1]);
  return (
    <figure class="chart">
      <figcaption id={`${id}-caption`}>{caption}</figcaption>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-labelledby={`${id}-caption`} aria-describedby={`${id}-summary`} data-chart={id}>
        <desc id={`${id}-summary`}>{summary}</desc>
        <line class="chart-axis" x1={plot.left} x2={width - plot.right} y1={y(0)} y2={y(0)} />
        <line class="chart-grid" x1={plot.left} x2={width - plot.right} y1={y(max)} y2={y(max)} />
        <text class="chart-label" x={plot.left - 6} y={y(max) + 4} text-anchor="end">
          {max}
        </text>
        <text class="chart-label" x={plot.left - 6} y={y(0) + 4} text-anchor="end">
          0
        </text>
        {bars.map((bar, i) => {
          const x = plot.left + i * slot + (slot - barWidth) / 2;
          let base = 0;
          return (
            <g key={bar.label} data-bar={bar.label} data-total={totals[i]}>
              <title>{`${bar.label}: ${series.map((name, s) => `${bar.values[s] ?? 0} ${name}`).join(', ')}`}</title>
              {bar.values.map((value, s) => {
                const top = y(base + value);
                const rect = value > 0 ? <rect key={s} class={`chart-series-${colors[s]}`} x={x} y={top} width={barWidth} height={y(base) - top} /> : null;
                base += value;
                return rect;
              })}
              {labelled.has(i) && (
                <text class="chart-label" x={x + barWidth / 2} y={height - 8} text-anchor="middle">
                  {bar.label.slice(5)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      {series.length > 1 && (
        <ul class="chart-legend" aria-hidden="true">
          {series.map((name, s) => (
            <li key={name}>
              <span class={`chart-swatch chart-series-${colors[s]}`} /> {name}
            </li>
          ))}
        </ul>
      )}
    </figure>
  );
}

/** Every UTC day from `since` to `until` (both ISO), as `YYYY-MM-DD`. */
export function daysBetween(since: string, until: string): string[] {
  const days: string[] = [];
  const last = until.slice(0, 10);
  for (let day = new Date(`${since.slice(0, 10)}T00:00:00Z`); days.length < 400; day = new Date(day.getTime() + 86_400_000)) {
    const text = day.toISOString().slice(0, 10);
    days.push(text);
    if (text >= last) break;
  }
  return days;
}
