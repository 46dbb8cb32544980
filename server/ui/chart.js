// A uPlot chart of one or more series of `[timestamp, granularity, value]`
// rows, with the plotted numbers alongside: a table, and the figure's
// `data-plotted` attribute (JSON `{series: [{label, timestamps, values}]}`)
// for scripts and tests.
import uPlot from './vendor/uPlot.esm.js';
import { el } from './dom.js';

export const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2'];

const HEIGHT = 300;
const plots = new WeakMap();

const seconds = (timestamp) => Date.parse(timestamp) / 1000;

/** uPlot wants one shared x column: the union of the timestamps, with gaps as null. */
function columns(series) {
  const times = [...new Set(series.flatMap((s) => s.points.map((p) => seconds(p[0]))))].sort((a, b) => a - b);
  const slot = new Map(times.map((t, i) => [t, i]));
  const values = series.map((s) => {
    const column = new Array(times.length).fill(null);
    for (const [timestamp, , value] of s.points) column[slot.get(seconds(timestamp))] = value;
    return column;
  });
  return [times, ...values];
}

function pointsTable(series, data) {
  const [times, ...values] = data;
  const rows = times.map((t, i) =>
    el('tr', {}, el('td', {}, new Date(t * 1000).toISOString()), values.map((column) => el('td', {}, String(column[i] ?? '')))),
  );
  return el(
    'details',
    { class: 'points' },
    el('summary', {}, `Points (${times.length})`),
    el('table', {}, el('thead', {}, el('tr', {}, el('th', {}, 'timestamp (UTC)'), series.map((s) => el('th', {}, s.label)))), el('tbody', {}, rows)),
  );
}

/** Replaces what `figure` shows with `series` ([{label, points}]). */
export function drawChart(figure, series) {
  plots.get(figure)?.destroy();
  plots.delete(figure);
  figure.replaceChildren();
  figure.dataset.plotted = JSON.stringify({
    series: series.map((s) => ({ label: s.label, timestamps: s.points.map((p) => p[0]), values: s.points.map((p) => p[2]) })),
  });
  if (series.every((s) => s.points.length === 0)) {
    figure.append(el('p', { class: 'empty' }, 'No points in this range.'));
    return;
  }
  const data = columns(series);
  const area = el('div', { class: 'plot' });
  figure.append(area, pointsTable(series, data));
  const plot = new uPlot(
    {
      width: area.clientWidth || 600,
      height: HEIGHT,
      // The API speaks UTC; so does the chart.
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      scales: { x: { time: true } },
      series: [
        { label: 'time (UTC)' },
        ...series.map((s, i) => ({ label: s.label, stroke: COLORS[i % COLORS.length], width: 2, spanGaps: true })),
      ],
    },
    data,
    area,
  );
  plots.set(figure, plot);
}

// Charts follow the width of their panel.
const resizer = new ResizeObserver((entries) => {
  for (const entry of entries) {
    const plot = plots.get(entry.target);
    if (plot !== undefined) plot.setSize({ width: entry.target.clientWidth, height: HEIGHT });
  }
});

/** Makes `figure` a chart holder that follows its width. */
export function chartFigure(figure) {
  resizer.observe(figure);
  return figure;
}
