// Browsing: resource types, a resource search in Gnocchi's string query
// language, a resource's attributes and metrics, and standalone metrics.
import { api } from './api.js';
import { byId, el, guarded } from './dom.js';

const resourcesPanel = byId('resources-panel');
const resourcePanel = byId('resource-panel');
const metricsPanel = byId('metrics-panel');
const typeSelect = byId('resource-type');
const queryInput = byId('query');

/** Called with a metric id when the user opens a metric. */
let openMetric = () => {};

function loadTypes() {
  return guarded(resourcesPanel, async () => {
    const types = await api('GET', '/v1/resource_type');
    const current = typeSelect.value || 'generic';
    typeSelect.replaceChildren(...types.map((t) => el('option', { value: t.name, selected: t.name === current }, t.name)));
  });
}

/** The string query goes in `filter` with an empty body, as Gnocchi reads it. */
function search() {
  return guarded(resourcesPanel, async () => {
    const type = typeSelect.value || 'generic';
    const resources = await api('POST', `/v1/search/resource/${encodeURIComponent(type)}`, { query: { filter: queryInput.value.trim() } });
    byId('resources').replaceChildren(
      ...resources.map((r) =>
        el(
          'li',
          {},
          el(
            'button',
            { type: 'button', class: 'link', 'data-resource-id': r.id, onclick: () => showResource(r) },
            r.original_resource_id || r.id,
          ),
          el('span', { class: 'muted' }, ` ${r.type}`),
        ),
      ),
    );
    if (resources.length === 0) byId('resources').append(el('li', { class: 'muted' }, 'No resources match.'));
  });
}

function showResource(resource) {
  resourcePanel.hidden = false;
  byId('resource-title').textContent = resource.original_resource_id || resource.id;
  const attributes = Object.entries(resource).filter(([name]) => name !== 'metrics');
  byId('resource-attributes').replaceChildren(
    ...attributes.map(([name, value]) => el('tr', {}, el('th', {}, name), el('td', {}, value === null ? '—' : String(value)))),
  );
  const metrics = Object.entries(resource.metrics).sort(([a], [b]) => a.localeCompare(b));
  byId('resource-metrics').replaceChildren(
    ...metrics.map(([name, id]) =>
      el('li', {}, el('button', { type: 'button', class: 'link', 'data-metric-id': id, onclick: () => openMetric(id) }, name)),
    ),
  );
  if (metrics.length === 0) byId('resource-metrics').append(el('li', { class: 'muted' }, 'No metrics.'));
}

function loadStandaloneMetrics() {
  return guarded(metricsPanel, async () => {
    const metrics = (await api('GET', '/v1/metric')).filter((m) => m.resource_id === null);
    byId('metrics').replaceChildren(
      ...metrics.map((m) =>
        el(
          'li',
          {},
          el('button', { type: 'button', class: 'link', 'data-metric-id': m.id, onclick: () => openMetric(m.id) }, m.name ?? m.id),
          el('span', { class: 'muted' }, ` ${m.archive_policy.name}`),
        ),
      ),
    );
    if (metrics.length === 0) byId('metrics').append(el('li', { class: 'muted' }, 'No standalone metrics.'));
  });
}

/** Wires the panels; `onMetric(id)` opens a metric. */
export function setUpBrowse(onMetric) {
  openMetric = onMetric;
  byId('search').addEventListener('submit', (event) => {
    event.preventDefault();
    void search();
  });
  typeSelect.addEventListener('change', () => void search());
}

/** (Re)loads everything for the signed-in user. */
export async function loadBrowse() {
  await loadTypes();
  await Promise.all([search(), loadStandaloneMetrics()]);
}
