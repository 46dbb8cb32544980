// The /v1/aggregates panel: an operations expression, optional
// granularity, time bounds and refresh, and a chart of every series of the answer.
import { api } from './api.js';
import { chartFigure, drawChart } from './chart.js';
import { byId, guarded } from './dom.js';

const panel = byId('aggregates-panel');
const figure = chartFigure(byId('aggregates-chart'));

/**
 * The series of an answer, labelled by where they sit: `aggregated`, or
 * `metric id / method` (`resource / metric name / method`), or a group's
 * attributes first with groupby.
 */
function seriesOf(node, path = []) {
  const label = path.join(' / ') || 'series';
  if (Array.isArray(node)) {
    if (node.every(Array.isArray)) return [{ label, points: node }];
    return node.flatMap((group) => seriesOf(group.measures.measures, [...path, JSON.stringify(group.group)]));
  }
  return Object.entries(node).flatMap(([key, child]) => seriesOf(child, [...path, key]));
}

function run() {
  return guarded(panel, async () => {
    const answer = await api('POST', '/v1/aggregates', {
      query: {
        granularity: byId('aggregates-granularity').value.trim(),
        start: byId('aggregates-start').value.trim(),
        stop: byId('aggregates-stop').value.trim(),
        refresh: byId('aggregates-refresh').checked ? 'true' : '',
      },
      body: { operations: byId('operations').value },
    });
    drawChart(figure, seriesOf(Array.isArray(answer) ? answer : answer.measures));
  });
}

export function setUpAggregates() {
  byId('aggregates').addEventListener('submit', (event) => {
    event.preventDefault();
    void run();
  });
}
