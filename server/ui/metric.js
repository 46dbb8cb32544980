// One metric's measures on a chart: granularity and aggregation method
// from its archive policy, a time range, and a refresh that has the server
// process waiting measures first.
import { api } from './api.js';
import { chartFigure, drawChart } from './chart.js';
import { byId, el, guarded } from './dom.js';

const panel = byId('plot-panel');
const granularitySelect = byId('plot-granularity');
const aggregationSelect = byId('plot-aggregation');
const rangeSelect = byId('plot-range');
const startInput = byId('plot-start');
const stopInput = byId('plot-stop');
const figure = chartFigure(byId('plot-chart'));

/** Seconds back from now of each preset range; `all` has no start. */
const RANGES = { hour: 3600, day: 86400, week: 7 * 86400 };

let metric = null;
/** Bumped per read, so a slow answer never replaces a newer one. */
let reads = 0;

/** Python's `str(timedelta)` as the API shows granularities: "0:01:00", "1 day, 0:00:00". */
function durationSeconds(text) {
  const match = /^(?:(-?\d+) days?, )?(\d+):(\d\d):(\d\d(?:\.\d+)?)$/.exec(text);
  if (match === null) return Number(text);
  const [, days = '0', hours, minutes, secs] = match;
  return Number(days) * 86400 + Number(hours) * 3600 + Number(minutes) * 60 + Number(secs);
}

/** A preset range ends now: it is recomputed on every read. */
function applyRange() {
  if (rangeSelect.value === 'custom') return;
  const back = RANGES[rangeSelect.value];
  startInput.value = back === undefined ? '' : new Date(Date.now() - back * 1000).toISOString();
  stopInput.value = '';
}

function draw({ refresh = false } = {}) {
  applyRange();
  const read = ++reads;
  return guarded(panel, async () => {
    const points = await api('GET', `/v1/metric/${metric.id}/measures`, {
      query: {
        granularity: granularitySelect.value,
        aggregation: aggregationSelect.value,
        start: startInput.value.trim(),
        stop: stopInput.value.trim(),
        refresh: refresh ? 'true' : '',
      },
    });
    if (read === reads) drawChart(figure, [{ label: aggregationSelect.value, points }]);
  });
}

/** Opens the metric `id`: its pickers, then its chart. */
export async function openMetric(id) {
  panel.hidden = false;
  const opened = await guarded(panel, async () => {
    metric = await api('GET', `/v1/metric/${id}`);
    const policy = metric.archive_policy;
    byId('plot-title').textContent = metric.name ?? metric.id;
    byId('plot-subtitle').textContent = `${metric.id} · policy ${policy.name}`;
    const granularities = policy.definition.map((d) => d.granularity).sort((a, b) => durationSeconds(a) - durationSeconds(b));
    granularitySelect.replaceChildren(...granularities.map((g) => el('option', { value: durationSeconds(g) }, g)));
    const methods = [...policy.aggregation_methods].sort();
    aggregationSelect.replaceChildren(...methods.map((m) => el('option', { value: m, selected: m === 'mean' }, m)));
    return true;
  });
  if (opened) await draw();
}

export function setUpMetric() {
  for (const select of [granularitySelect, aggregationSelect]) select.addEventListener('change', () => void draw());
  rangeSelect.addEventListener('change', () => void draw());
  for (const input of [startInput, stopInput]) {
    input.addEventListener('change', () => {
      rangeSelect.value = 'custom';
      void draw();
    });
  }
  byId('plot-refresh').addEventListener('click', () => void draw({ refresh: true }));
}
