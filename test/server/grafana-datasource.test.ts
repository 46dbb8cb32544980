// grafana-gnocchi-datasource 1.7.1 (gnocchixyz/grafana-gnocchi-datasource,
// src/datasource.ts) talking to us as to Gnocchi 4.4: every HTTP request it
// sends, with the answer Gnocchi 4.4.2 gave (observed on the reference server
// with the same data, replayed by /tmp/grafana-replay/replay.mjs; metric ids,
// creation times and the run's unique names normalised).
//
// Request shapes (datasource.ts lines):
//  - testDatasource: GET v1/resource (608); requireVersion: GET / (677);
//    getResourceTypes: GET v1/resource_type (659).
//  - query(), default_measures_req (98-121): start/end/stop as
//    moment#toISOString (`2024-01-01T00:03:00.000Z`), end and stop both set,
//    granularity when given (159-161), aggregation = the target's aggregator.
//    - metric mode: GET v1/metric/ID (248-251, its `resource` labels the
//      series: 256), then GET v1/metric/ID/measures (260);
//    - resource mode: GET v1/resource/TYPE/ID (235-238), then
//      GET v1/resource/TYPE/ID/metric/NAME/measures (240);
//    - resource_search: POST v1/search/resource/TYPE with ?filter=STRING or a
//      JSON body (638-649, 200-202), then each matching metric's measures
//      (217-220);
//    - resource_aggregation: the same search, then GET v1/aggregation/metric
//      with metric=ID repeated, reaggregation, fill, needed_overlap (224-229,
//      624-636); with groupby: POST v1/aggregation/resource/TYPE/metric/NAME
//      with groupby repeated (191-196);
//    - dynamic_aggregates: POST v1/aggregates?details=true with fill,
//      needed_overlap, groupby repeated, body {operations} or {operations,
//      search: STRING, resource_type} (167-188; search is sent as typed, so a
//      JSON search is a string that Gnocchi parses as a query string).
//  - metricFindQuery: resources(TYPE, DISPLAY, VALUE, QUERY) and the legacy
//    resources(TYPE, ATTR, QUERY): POST v1/search/resource/TYPE with attrs
//    repeated (513-583); metrics(ID): GET v1/resource/generic/ID with the same
//    params object (filter, attrs null) (585-597).
//  - completion: POST v1/search/resource/TYPE?attrs=ATTR with body `{}`
//    (414-421), GET v1/resource/generic/ID (478), GET v1/metric/ID (445).
//  - headers (_gnocchi_request, 822-846): Content-Type: application/json on
//    every request, Authorization (basic auth), X-Auth-Token (token mode) or
//    X-Project-Id/X-User-Id/X-Domain-Id/X-Roles (noauth mode); the browser
//    adds Origin and Grafana Accept: application/json, text/plain, */*, so
//    every request is preceded by a CORS preflight, and Gnocchi's errors come
//    as WebOb's HTML page.
//
// Each request is pinned in both serialisations of its `params` by Grafana's
// backendSrv: [ng] before Grafana 6.7 (angular $http: null params dropped,
// keys sorted, arrays repeated, spaces as '+'), [fetch] from 6.7 (fetch:
// null sent as the text "null", so Gnocchi refuses granularity=null before
// anything else: the [fetch granularity=60] rows show how the other "null"s
// fare once a granularity is set).
//
// Orders Gnocchi leaves to its storage are not pinned: a resource's `metrics`
// (Gnocchi: creation order; ours: by name), the `references` of
// /v1/aggregates (a Python set) and `aggregation_methods` (a set).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.js';

interface Shape {
  name: string;
  /** datasource.ts lines */
  source: string;
  method: 'GET' | 'POST';
  /** As sent, metric ids as `<metric rN/name>` labels. */
  path: string;
  body?: string;
  /** Credentials other than basic auth as admin. */
  auth?: 'token' | 'noauth' | 'none' | 'wrong';
  status: number;
  /** The JSON answer. */
  json?: unknown;
  /** The error page answered to Grafana's Accept (WebOb's HTML). */
  html?: string;
  /** The error description, asked again with Accept: application/json. */
  description?: unknown;
  /** Gnocchi 4.4 loses its worker on this one and never answers: our answer is pinned. */
  referenceNeverAnswers?: boolean;
}

const ORIGIN = 'http://foobar.com';
const RT = 'grafana_instance';
const AP = 'grafana-policy';
const P1 = 'a1b2c3d4-0000-4000-8000-000000000001';
const P2 = 'a1b2c3d4-0000-4000-8000-000000000002';
const RESOURCES = [
  { id: '1e8da77f-fa82-4e67-aba9-270c5ae8cbca', display_name: 'vm1', host: 'compute1', project_id: P1, metrics: ['cpu_util', 'cpu_time'] },
  { id: '5898ba55-bbea-460f-985c-3d1243348304', display_name: 'vm2', host: 'compute1', project_id: P2, metrics: ['cpu_util', 'cpu_time'] },
  { id: 'a634173a-e3b8-4119-9eba-fa9a4d971c3b', display_name: 'vm 3', host: 'compute2', project_id: P1, metrics: ['cpu_util', 'memory'] },
];
const T0 = Date.parse('2024-01-01T00:00:00Z');

/** 12 measures a minute apart (7 s past each minute), values from the label. */
function measures(label: string) {
  let h = 0;
  for (const c of label) h = (h * 31 + c.charCodeAt(0)) % 97;
  return Array.from({ length: 12 }, (_, k) => ({ timestamp: new Date(T0 + k * 60e3 + 7e3).toISOString(), value: ((h + k * 7) % 23) + 0.5 }));
}

const BROWSER = { origin: ORIGIN, accept: 'application/json, text/plain, */*', 'content-type': 'application/json' };
const HEADERS: Record<NonNullable<Shape['auth']> | 'basic', Record<string, string>> = {
  basic: { ...BROWSER, authorization: 'basic YWRtaW46' },
  wrong: { ...BROWSER, authorization: 'basic Og==' },
  none: BROWSER,
  token: { ...BROWSER, 'x-auth-token': 'XXXXXXXXXXXXX' },
  noauth: { ...BROWSER, 'x-project-id': P1, 'x-user-id': 'grafana-user', 'x-domain-id': 'default', 'x-roles': 'admin' },
};

let t: TestApp;
/** label -> id, id -> label */
const ids = new Map<string, string>();
const labels = new Map<string, string>();

async function must(method: 'GET' | 'POST', url: string, body: unknown, status: number): Promise<any> {
  const res = await t.app.inject({ method, url, headers: { authorization: 'basic YWRtaW46', 'content-type': 'application/json' }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
  if (res.statusCode !== status) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.body === '' ? undefined : JSON.parse(res.body);
}

beforeAll(async () => {
  t = await startTestApp({ corsOrigins: [ORIGIN] });
  await must('POST', '/v1/archive_policy', {
    name: AP,
    back_window: 0,
    definition: [{ granularity: '60s', points: 1440 }, { granularity: '300s', points: 288 }],
    aggregation_methods: ['mean', 'max', 'min', 'sum', 'count', 'last'],
  }, 201);
  const attribute = { type: 'string', required: false };
  await must('POST', '/v1/resource_type', { name: RT, attributes: { display_name: attribute, host: attribute, server_group: attribute } }, 201);
  for (const [i, r] of RESOURCES.entries()) {
    const created = await must('POST', `/v1/resource/${RT}`, {
      id: r.id, display_name: r.display_name, host: r.host, server_group: 'autoscaling', project_id: r.project_id,
      user_id: 'grafana-user', started_at: `2024-01-0${i + 1}T00:00:00`,
      metrics: Object.fromEntries(r.metrics.map((m) => [m, { archive_policy_name: AP }])),
    }, 201);
    for (const [name, id] of Object.entries(created.metrics as Record<string, string>)) ids.set(`<metric r${i + 1}/${name}>`, id);
  }
  const lone = await must('POST', '/v1/metric', { archive_policy_name: AP, name: 'lone', unit: 'ms' }, 201);
  ids.set('<metric lone>', lone.id);
  for (const [label, id] of ids) {
    labels.set(id, label);
    await must('POST', `/v1/metric/${id}/measures`, measures(label), 202);
  }
  for (const id of ids.values()) await must('GET', `/v1/metric/${id}/measures?refresh=true`, undefined, 200);
});
afterAll(async () => {
  await t.close();
});

/** The request as sent: labels replaced by our metric ids. */
function resolve(text: string): string {
  return text.replace(/<metric [^>]+>/g, (label) => ids.get(label) ?? label);
}

/** The answer as pinned: our metric ids as labels, our base URL as `<base>`. */
function normaliseText(text: string): string {
  let out = text.split('http://localhost:80').join('<base>');
  for (const [id, label] of labels) out = out.split(id).join(label);
  return out;
}

/** Creation times, and the orders Gnocchi leaves to its storage (see the top). */
function normaliseJson(v: unknown, key?: string): unknown {
  if (Array.isArray(v)) {
    const out = v.map((x) => normaliseJson(x, key));
    if (key === 'references') out.sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
    if (key === 'aggregation_methods') out.sort();
    return out;
  }
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v);
    if (key === 'metrics') entries.sort(([a], [b]) => (a < b ? -1 : 1));
    return Object.fromEntries(entries.map(([k, x]) => [k, normaliseJson(x, k)]));
  }
  if (typeof v === 'string' && (key === 'revision_start' || (key === 'started_at' && /T\d\d:\d\d:\d\d\.\d+/.test(v)))) return '<time>';
  return v;
}

/** Key order matters (clients print what they get): compared as indented JSON text. */
const asText = (v: unknown) => JSON.stringify(v, null, 1);

async function send(shape: Shape, accept?: string) {
  const headers = { ...HEADERS[shape.auth ?? 'basic'], ...(accept === undefined ? {} : { accept }) };
  return t.app.inject({ method: shape.method, url: resolve(shape.path), headers, ...(shape.body === undefined ? {} : { payload: resolve(shape.body) }) });
}

// ---------------------------------------------------------------------------
// Gnocchi 4.4.2's answers, observed (shared by the shapes below)

/** testDatasource GET v1/resource [ng] */
const TESTDATASOURCE_GET_V1_RESOURCE_NG: unknown = {"generic": "<base>/v1/resource/generic", "grafana_instance": "<base>/v1/resource/grafana_instance"};
/** requireVersion GET / [ng] */
const REQUIREVERSION_GET_NG: unknown = {"build": "4.4.2", "versions": [{"status": "CURRENT", "links": [{"rel": "self", "href": "<base>/v1/"}], "id": "v1.0", "updated": "2015-03-19"}]};
/** getResourceTypes GET v1/resource_type [ng] */
const GETRESOURCETYPES_GET_V1_RESOURCE_TYPE_NG: unknown = [{"name": "generic", "attributes": {}, "state": "active"}, {"name": "grafana_instance", "attributes": {"display_name": {"type": "string", "required": false, "max_length": 255, "min_length": 0}, "host": {"type": "string", "required": false, "max_length": 255, "min_length": 0}, "server_group": {"type": "string", "required": false, "max_length": 255, "min_length": 0}}, "state": "active"}];
/** metric mode GET v1/metric/ID [ng] */
const METRIC_MODE_GET_V1_METRIC_ID_NG: unknown = {"id": "<metric r1/cpu_util>", "creator": "admin", "name": "cpu_util", "unit": null, "resource": {"creator": "admin", "started_at": "2024-01-01T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000001", "original_resource_id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "type": "grafana_instance", "revision_end": null, "created_by_user_id": "admin", "created_by_project_id": ""}, "archive_policy": {"name": "grafana-policy", "back_window": 0, "definition": [{"timespan": "1 day, 0:00:00", "granularity": "0:01:00", "points": 1440}, {"timespan": "1 day, 0:00:00", "granularity": "0:05:00", "points": 288}], "aggregation_methods": ["count", "last", "max", "mean", "min", "sum"]}, "created_by_user_id": "admin", "created_by_project_id": ""};
/** metric mode GET v1/metric/ID (no resource) [ng] */
const METRIC_MODE_GET_V1_METRIC_ID_NO_RESOURCE_NG: unknown = {"id": "<metric lone>", "creator": "admin", "name": "lone", "unit": "ms", "resource": null, "archive_policy": {"name": "grafana-policy", "back_window": 0, "definition": [{"timespan": "1 day, 0:00:00", "granularity": "0:01:00", "points": 1440}, {"timespan": "1 day, 0:00:00", "granularity": "0:05:00", "points": 288}], "aggregation_methods": ["count", "last", "max", "mean", "min", "sum"]}, "created_by_user_id": "admin", "created_by_project_id": ""};
/** metric mode measures aggregation=mean [ng] */
const METRIC_MODE_MEASURES_AGGREGATION_MEAN_NG: unknown = [["2024-01-01T00:00:00+00:00", 300, 11.3], ["2024-01-01T00:05:00+00:00", 300, 9.5], ["2024-01-01T00:03:00+00:00", 60, 4.5], ["2024-01-01T00:04:00+00:00", 60, 11.5], ["2024-01-01T00:05:00+00:00", 60, 18.5], ["2024-01-01T00:06:00+00:00", 60, 2.5], ["2024-01-01T00:07:00+00:00", 60, 9.5], ["2024-01-01T00:08:00+00:00", 60, 16.5]];
/** page metric mode measures aggregation=mean [fetch] */
const PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH = "<html>\n <head>\n  <title>400 Bad Request</title>\n </head>\n <body>\n  <h1>400 Bad Request</h1>\n  The server could not comply with the request since it is either malformed or otherwise incorrect.<br /><br />\n{&#x27;cause&#x27;: &#x27;Argument value error&#x27;, &#x27;detail&#x27;: &#x27;granularity&#x27;, &#x27;reason&#x27;: &#x27;Unable to parse timespan&#x27;}\n\n\n </body>\n</html>";
/** metric mode measures aggregation=mean [fetch granularity=60] */
const METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH_GRANULARITY_60: unknown = [["2024-01-01T00:03:00+00:00", 60, 4.5], ["2024-01-01T00:04:00+00:00", 60, 11.5], ["2024-01-01T00:05:00+00:00", 60, 18.5], ["2024-01-01T00:06:00+00:00", 60, 2.5], ["2024-01-01T00:07:00+00:00", 60, 9.5], ["2024-01-01T00:08:00+00:00", 60, 16.5]];
/** metric mode measures aggregation=max [ng] */
const METRIC_MODE_MEASURES_AGGREGATION_MAX_NG: unknown = [["2024-01-01T00:00:00+00:00", 300, 20.5], ["2024-01-01T00:05:00+00:00", 300, 18.5], ["2024-01-01T00:03:00+00:00", 60, 4.5], ["2024-01-01T00:04:00+00:00", 60, 11.5], ["2024-01-01T00:05:00+00:00", 60, 18.5], ["2024-01-01T00:06:00+00:00", 60, 2.5], ["2024-01-01T00:07:00+00:00", 60, 9.5], ["2024-01-01T00:08:00+00:00", 60, 16.5]];
/** metric mode measures aggregation=count [ng] */
const METRIC_MODE_MEASURES_AGGREGATION_COUNT_NG: unknown = [["2024-01-01T00:00:00+00:00", 300, 5], ["2024-01-01T00:05:00+00:00", 300, 5], ["2024-01-01T00:03:00+00:00", 60, 1], ["2024-01-01T00:04:00+00:00", 60, 1], ["2024-01-01T00:05:00+00:00", 60, 1], ["2024-01-01T00:06:00+00:00", 60, 1], ["2024-01-01T00:07:00+00:00", 60, 1], ["2024-01-01T00:08:00+00:00", 60, 1]];
/** metric mode measures aggregation=count [fetch granularity=60] */
const METRIC_MODE_MEASURES_AGGREGATION_COUNT_FETCH_GRANULARITY_60: unknown = [["2024-01-01T00:03:00+00:00", 60, 1], ["2024-01-01T00:04:00+00:00", 60, 1], ["2024-01-01T00:05:00+00:00", 60, 1], ["2024-01-01T00:06:00+00:00", 60, 1], ["2024-01-01T00:07:00+00:00", 60, 1], ["2024-01-01T00:08:00+00:00", 60, 1]];
/** page metric mode measures unknown aggregation [ng] */
const PAGE_METRIC_MODE_MEASURES_UNKNOWN_AGGREGATION_NG = "<html>\n <head>\n  <title>404 Not Found</title>\n </head>\n <body>\n  <h1>404 Not Found</h1>\n  The resource could not be found.<br /><br />\n{&#x27;cause&#x27;: &#x27;Aggregation method does not exist for this metric&#x27;, &#x27;detail&#x27;: {&#x27;metric&#x27;: UUID(&#x27;<metric r1/cpu_util>&#x27;), &#x27;aggregation_method&#x27;: &#x27;std&#x27;}}\n\n\n </body>\n</html>";
/** description metric mode measures unknown aggregation [ng] */
const DESCRIPTION_METRIC_MODE_MEASURES_UNKNOWN_AGGREGATION_NG: unknown = {"cause": "Aggregation method does not exist for this metric", "detail": {"metric": "<metric r1/cpu_util>", "aggregation_method": "std"}};
/** page metric mode measures unknown granularity [ng] */
const PAGE_METRIC_MODE_MEASURES_UNKNOWN_GRANULARITY_NG = "<html>\n <head>\n  <title>404 Not Found</title>\n </head>\n <body>\n  <h1>404 Not Found</h1>\n  The resource could not be found.<br /><br />\nAggregation method &#x27;mean&#x27; at granularity &#x27;3600.0&#x27; for metric <metric r1/cpu_util> does not exist\n\n\n </body>\n</html>";
/** page metric mode GET unknown metric [ng] */
const PAGE_METRIC_MODE_GET_UNKNOWN_METRIC_NG = "<html>\n <head>\n  <title>404 Not Found</title>\n </head>\n <body>\n  <h1>404 Not Found</h1>\n  The resource could not be found.<br /><br />\nMetric 00000000-0000-4000-8000-00000000dead does not exist\n\n\n </body>\n</html>";
/** metric mode no range.to [ng] */
const METRIC_MODE_NO_RANGE_TO_NG: unknown = [["2024-01-01T00:00:00+00:00", 300, 18.5], ["2024-01-01T00:05:00+00:00", 300, 21.5], ["2024-01-01T00:10:00+00:00", 300, 19.5], ["2024-01-01T00:03:00+00:00", 60, 16.5], ["2024-01-01T00:04:00+00:00", 60, 0.5], ["2024-01-01T00:05:00+00:00", 60, 7.5], ["2024-01-01T00:06:00+00:00", 60, 14.5], ["2024-01-01T00:07:00+00:00", 60, 21.5], ["2024-01-01T00:08:00+00:00", 60, 5.5], ["2024-01-01T00:09:00+00:00", 60, 12.5], ["2024-01-01T00:10:00+00:00", 60, 19.5], ["2024-01-01T00:11:00+00:00", 60, 3.5]];
/** page metric mode no range.to [fetch] */
const PAGE_METRIC_MODE_NO_RANGE_TO_FETCH = "<html>\n <head>\n  <title>400 Bad Request</title>\n </head>\n <body>\n  <h1>400 Bad Request</h1>\n  The server could not comply with the request since it is either malformed or otherwise incorrect.<br /><br />\n{&#x27;cause&#x27;: &#x27;Argument value error&#x27;, &#x27;detail&#x27;: &#x27;stop&#x27;, &#x27;reason&#x27;: &#x27;Must be a datetime or a timestamp&#x27;}\n\n\n </body>\n</html>";
/** resource mode GET v1/resource/TYPE/ID [ng] */
const RESOURCE_MODE_GET_V1_RESOURCE_TYPE_ID_NG: unknown = {"creator": "admin", "started_at": "2024-01-01T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000001", "original_resource_id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "type": "grafana_instance", "display_name": "vm1", "host": "compute1", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_time": "<metric r1/cpu_time>", "cpu_util": "<metric r1/cpu_util>"}, "created_by_user_id": "admin", "created_by_project_id": ""};
/** page resource mode measures unknown metric [ng] */
const PAGE_RESOURCE_MODE_MEASURES_UNKNOWN_METRIC_NG = "<html>\n <head>\n  <title>404 Not Found</title>\n </head>\n <body>\n  <h1>404 Not Found</h1>\n  The resource could not be found.<br /><br />\nMetric nope does not exist\n\n\n </body>\n</html>";
/** resource_search POST search filter=qs [ng] */
const RESOURCE_SEARCH_POST_SEARCH_FILTER_QS_NG: unknown = [{"creator": "admin", "started_at": "2024-01-01T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000001", "original_resource_id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "type": "grafana_instance", "display_name": "vm1", "host": "compute1", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_time": "<metric r1/cpu_time>", "cpu_util": "<metric r1/cpu_util>"}, "created_by_user_id": "admin", "created_by_project_id": ""}, {"creator": "admin", "started_at": "2024-01-02T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000002", "original_resource_id": "5898ba55-bbea-460f-985c-3d1243348304", "id": "5898ba55-bbea-460f-985c-3d1243348304", "type": "grafana_instance", "display_name": "vm2", "host": "compute1", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_time": "<metric r2/cpu_time>", "cpu_util": "<metric r2/cpu_util>"}, "created_by_user_id": "admin", "created_by_project_id": ""}, {"creator": "admin", "started_at": "2024-01-03T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000001", "original_resource_id": "a634173a-e3b8-4119-9eba-fa9a4d971c3b", "id": "a634173a-e3b8-4119-9eba-fa9a4d971c3b", "type": "grafana_instance", "display_name": "vm 3", "host": "compute2", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_util": "<metric r3/cpu_util>", "memory": "<metric r3/memory>"}, "created_by_user_id": "admin", "created_by_project_id": ""}];
/** resource_search POST search filter=qs and [ng] */
const RESOURCE_SEARCH_POST_SEARCH_FILTER_QS_AND_NG: unknown = [{"creator": "admin", "started_at": "2024-01-01T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000001", "original_resource_id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "type": "grafana_instance", "display_name": "vm1", "host": "compute1", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_time": "<metric r1/cpu_time>", "cpu_util": "<metric r1/cpu_util>"}, "created_by_user_id": "admin", "created_by_project_id": ""}, {"creator": "admin", "started_at": "2024-01-02T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000002", "original_resource_id": "5898ba55-bbea-460f-985c-3d1243348304", "id": "5898ba55-bbea-460f-985c-3d1243348304", "type": "grafana_instance", "display_name": "vm2", "host": "compute1", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_time": "<metric r2/cpu_time>", "cpu_util": "<metric r2/cpu_util>"}, "created_by_user_id": "admin", "created_by_project_id": ""}];
/** resource_search POST search filter=templated in-list [ng] */
const RESOURCE_SEARCH_POST_SEARCH_FILTER_TEMPLATED_IN_LIST_NG: unknown = [{"creator": "admin", "started_at": "2024-01-01T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000001", "original_resource_id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "type": "grafana_instance", "display_name": "vm1", "host": "compute1", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_time": "<metric r1/cpu_time>", "cpu_util": "<metric r1/cpu_util>"}, "created_by_user_id": "admin", "created_by_project_id": ""}, {"creator": "admin", "started_at": "2024-01-03T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000001", "original_resource_id": "a634173a-e3b8-4119-9eba-fa9a4d971c3b", "id": "a634173a-e3b8-4119-9eba-fa9a4d971c3b", "type": "grafana_instance", "display_name": "vm 3", "host": "compute2", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_util": "<metric r3/cpu_util>", "memory": "<metric r3/memory>"}, "created_by_user_id": "admin", "created_by_project_id": ""}];
/** page resource_search POST search bad filter [ng] */
const PAGE_RESOURCE_SEARCH_POST_SEARCH_BAD_FILTER_NG = "<html>\n <head>\n  <title>400 Bad Request</title>\n </head>\n <body>\n  <h1>400 Bad Request</h1>\n  The server could not comply with the request since it is either malformed or otherwise incorrect.<br /><br />\nInvalid filter: Expected &#x27;&#8744;&#x27; term, found end of text  (at char 13), (line:1, col:14)\n\n\n </body>\n</html>";
/** resource_search POST search generic type [ng] */
const RESOURCE_SEARCH_POST_SEARCH_GENERIC_TYPE_NG: unknown = [{"creator": "admin", "started_at": "2024-01-02T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000002", "original_resource_id": "5898ba55-bbea-460f-985c-3d1243348304", "id": "5898ba55-bbea-460f-985c-3d1243348304", "type": "grafana_instance", "revision_end": null, "metrics": {"cpu_time": "<metric r2/cpu_time>", "cpu_util": "<metric r2/cpu_util>"}, "created_by_user_id": "admin", "created_by_project_id": ""}];
/** resource_search measures [ng] */
const RESOURCE_SEARCH_MEASURES_NG: unknown = [["2024-01-01T00:00:00+00:00", 300, 1.5], ["2024-01-01T00:05:00+00:00", 300, 6.5], ["2024-01-01T00:03:00+00:00", 60, 1.5], ["2024-01-01T00:04:00+00:00", 60, 8.5], ["2024-01-01T00:05:00+00:00", 60, 15.5], ["2024-01-01T00:06:00+00:00", 60, 22.5], ["2024-01-01T00:07:00+00:00", 60, 6.5], ["2024-01-01T00:08:00+00:00", 60, 13.5]];
/** resource_search measures [fetch granularity=60] */
const RESOURCE_SEARCH_MEASURES_FETCH_GRANULARITY_60: unknown = [["2024-01-01T00:03:00+00:00", 60, 1.5], ["2024-01-01T00:04:00+00:00", 60, 8.5], ["2024-01-01T00:05:00+00:00", 60, 15.5], ["2024-01-01T00:06:00+00:00", 60, 22.5], ["2024-01-01T00:07:00+00:00", 60, 6.5], ["2024-01-01T00:08:00+00:00", 60, 13.5]];
/** resource_aggregation GET v1/aggregation/metric reaggregation none fill=0 overlap=0 [ng] */
const RESOURCE_AGGREGATION_GET_V1_AGGREGATION_METRIC_REAGGREGATION: unknown = [["2024-01-01T00:00:00+00:00", 300, 12.300000000000002], ["2024-01-01T00:05:00+00:00", 300, 10.5], ["2024-01-01T00:03:00+00:00", 60, 5.5], ["2024-01-01T00:04:00+00:00", 60, 12.5], ["2024-01-01T00:05:00+00:00", 60, 19.5], ["2024-01-01T00:06:00+00:00", 60, 3.5], ["2024-01-01T00:07:00+00:00", 60, 10.5], ["2024-01-01T00:08:00+00:00", 60, 17.5]];
/** page resource_aggregation GET v1/aggregation/metric reaggregation none fill=0 overlap=0 [fetch granularity=60] */
const PAGE_RESOURCE_AGGREGATION_GET_V1_AGGREGATION_METRIC_REAGGREG = "<html>\n <head>\n  <title>400 Bad Request</title>\n </head>\n <body>\n  <h1>400 Bad Request</h1>\n  The server could not comply with the request since it is either malformed or otherwise incorrect.<br /><br />\nInvalid reaggregation method: null\n\n\n </body>\n</html>";
/** resource_aggregation GET v1/aggregation/metric reaggregation=max fill=0 [ng] */
const RESOURCE_AGGREGATION_GET_V1_AGGREGATION_METRIC_REAGGREGATION_2: unknown = [["2024-01-01T00:00:00+00:00", 300, 13.3], ["2024-01-01T00:05:00+00:00", 300, 11.5], ["2024-01-01T00:03:00+00:00", 60, 6.5], ["2024-01-01T00:04:00+00:00", 60, 13.5], ["2024-01-01T00:05:00+00:00", 60, 20.5], ["2024-01-01T00:06:00+00:00", 60, 4.5], ["2024-01-01T00:07:00+00:00", 60, 11.5], ["2024-01-01T00:08:00+00:00", 60, 18.5]];
/** resource_aggregation GET v1/aggregation/metric reaggregation=max fill=0 [fetch granularity=60] */
const RESOURCE_AGGREGATION_GET_V1_AGGREGATION_METRIC_REAGGREGATION_3: unknown = [["2024-01-01T00:03:00+00:00", 60, 6.5], ["2024-01-01T00:04:00+00:00", 60, 13.5], ["2024-01-01T00:05:00+00:00", 60, 20.5], ["2024-01-01T00:06:00+00:00", 60, 4.5], ["2024-01-01T00:07:00+00:00", 60, 11.5], ["2024-01-01T00:08:00+00:00", 60, 18.5]];
/** resource_aggregation groupby POST v1/aggregation/resource filter + groupby host [ng] */
const RESOURCE_AGGREGATION_GROUPBY_POST_V1_AGGREGATION_RESOURCE_FI: unknown = [{"group": {"host": "compute1"}, "measures": [["2024-01-01T00:00:00+00:00", 300, 11.8], ["2024-01-01T00:05:00+00:00", 300, 10], ["2024-01-01T00:03:00+00:00", 60, 5], ["2024-01-01T00:04:00+00:00", 60, 12], ["2024-01-01T00:05:00+00:00", 60, 19], ["2024-01-01T00:06:00+00:00", 60, 3], ["2024-01-01T00:07:00+00:00", 60, 10], ["2024-01-01T00:08:00+00:00", 60, 17]]}, {"group": {"host": "compute2"}, "measures": [["2024-01-01T00:00:00+00:00", 300, 13.3], ["2024-01-01T00:05:00+00:00", 300, 11.5], ["2024-01-01T00:03:00+00:00", 60, 6.5], ["2024-01-01T00:04:00+00:00", 60, 13.5], ["2024-01-01T00:05:00+00:00", 60, 20.5], ["2024-01-01T00:06:00+00:00", 60, 4.5], ["2024-01-01T00:07:00+00:00", 60, 11.5], ["2024-01-01T00:08:00+00:00", 60, 18.5]]}];
/** resource_aggregation groupby POST v1/aggregation/resource filter + groupby host,project_id reaggregation=max [ng] */
const RESOURCE_AGGREGATION_GROUPBY_POST_V1_AGGREGATION_RESOURCE_FI_2: unknown = [{"group": {"host": "compute1", "project_id": "a1b2c3d4-0000-4000-8000-000000000001"}, "measures": [["2024-01-01T00:00:00+00:00", 300, 11.3], ["2024-01-01T00:05:00+00:00", 300, 9.5], ["2024-01-01T00:03:00+00:00", 60, 4.5], ["2024-01-01T00:04:00+00:00", 60, 11.5], ["2024-01-01T00:05:00+00:00", 60, 18.5], ["2024-01-01T00:06:00+00:00", 60, 2.5], ["2024-01-01T00:07:00+00:00", 60, 9.5], ["2024-01-01T00:08:00+00:00", 60, 16.5]]}, {"group": {"host": "compute1", "project_id": "a1b2c3d4-0000-4000-8000-000000000002"}, "measures": [["2024-01-01T00:00:00+00:00", 300, 12.3], ["2024-01-01T00:05:00+00:00", 300, 10.5], ["2024-01-01T00:03:00+00:00", 60, 5.5], ["2024-01-01T00:04:00+00:00", 60, 12.5], ["2024-01-01T00:05:00+00:00", 60, 19.5], ["2024-01-01T00:06:00+00:00", 60, 3.5], ["2024-01-01T00:07:00+00:00", 60, 10.5], ["2024-01-01T00:08:00+00:00", 60, 17.5]]}, {"group": {"host": "compute2", "project_id": "a1b2c3d4-0000-4000-8000-000000000001"}, "measures": [["2024-01-01T00:00:00+00:00", 300, 13.3], ["2024-01-01T00:05:00+00:00", 300, 11.5], ["2024-01-01T00:03:00+00:00", 60, 6.5], ["2024-01-01T00:04:00+00:00", 60, 13.5], ["2024-01-01T00:05:00+00:00", 60, 20.5], ["2024-01-01T00:06:00+00:00", 60, 4.5], ["2024-01-01T00:07:00+00:00", 60, 11.5], ["2024-01-01T00:08:00+00:00", 60, 18.5]]}];
/** resource_aggregation groupby POST v1/aggregation/resource filter + groupby host,project_id reaggregation=max [fetch granularity=60] */
const RESOURCE_AGGREGATION_GROUPBY_POST_V1_AGGREGATION_RESOURCE_FI_3: unknown = [{"group": {"host": "compute1", "project_id": "a1b2c3d4-0000-4000-8000-000000000001"}, "measures": [["2024-01-01T00:03:00+00:00", 60, 4.5], ["2024-01-01T00:04:00+00:00", 60, 11.5], ["2024-01-01T00:05:00+00:00", 60, 18.5], ["2024-01-01T00:06:00+00:00", 60, 2.5], ["2024-01-01T00:07:00+00:00", 60, 9.5], ["2024-01-01T00:08:00+00:00", 60, 16.5]]}, {"group": {"host": "compute1", "project_id": "a1b2c3d4-0000-4000-8000-000000000002"}, "measures": [["2024-01-01T00:03:00+00:00", 60, 5.5], ["2024-01-01T00:04:00+00:00", 60, 12.5], ["2024-01-01T00:05:00+00:00", 60, 19.5], ["2024-01-01T00:06:00+00:00", 60, 3.5], ["2024-01-01T00:07:00+00:00", 60, 10.5], ["2024-01-01T00:08:00+00:00", 60, 17.5]]}, {"group": {"host": "compute2", "project_id": "a1b2c3d4-0000-4000-8000-000000000001"}, "measures": [["2024-01-01T00:03:00+00:00", 60, 6.5], ["2024-01-01T00:04:00+00:00", 60, 13.5], ["2024-01-01T00:05:00+00:00", 60, 20.5], ["2024-01-01T00:06:00+00:00", 60, 4.5], ["2024-01-01T00:07:00+00:00", 60, 11.5], ["2024-01-01T00:08:00+00:00", 60, 18.5]]}];
/** dynamic_aggregates metric ids one [ng] */
const DYNAMIC_AGGREGATES_METRIC_IDS_ONE_NG: unknown = {"measures": {"<metric r1/cpu_util>": {"mean": [["2024-01-01T00:00:00+00:00", 300, 11.3], ["2024-01-01T00:05:00+00:00", 300, 9.5], ["2024-01-01T00:03:00+00:00", 60, 4.5], ["2024-01-01T00:04:00+00:00", 60, 11.5], ["2024-01-01T00:05:00+00:00", 60, 18.5], ["2024-01-01T00:06:00+00:00", 60, 2.5], ["2024-01-01T00:07:00+00:00", 60, 9.5], ["2024-01-01T00:08:00+00:00", 60, 16.5]]}}, "references": [{"id": "<metric r1/cpu_util>", "creator": "admin", "name": "cpu_util", "unit": null, "resource_id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "archive_policy": {"name": "grafana-policy", "back_window": 0, "definition": [{"timespan": "1 day, 0:00:00", "granularity": "0:01:00", "points": 1440}, {"timespan": "1 day, 0:00:00", "granularity": "0:05:00", "points": 288}], "aggregation_methods": ["count", "last", "max", "mean", "min", "sum"]}, "created_by_user_id": "admin", "created_by_project_id": ""}]};
/** dynamic_aggregates metric ids one [fetch granularity=60] */
const DYNAMIC_AGGREGATES_METRIC_IDS_ONE_FETCH_GRANULARITY_60: unknown = {"measures": {"<metric r1/cpu_util>": {"mean": [["2024-01-01T00:03:00+00:00", 60, 4.5], ["2024-01-01T00:04:00+00:00", 60, 11.5], ["2024-01-01T00:05:00+00:00", 60, 18.5], ["2024-01-01T00:06:00+00:00", 60, 2.5], ["2024-01-01T00:07:00+00:00", 60, 9.5], ["2024-01-01T00:08:00+00:00", 60, 16.5]]}}, "references": [{"id": "<metric r1/cpu_util>", "creator": "admin", "name": "cpu_util", "unit": null, "resource_id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "archive_policy": {"name": "grafana-policy", "back_window": 0, "definition": [{"timespan": "1 day, 0:00:00", "granularity": "0:01:00", "points": 1440}, {"timespan": "1 day, 0:00:00", "granularity": "0:05:00", "points": 288}], "aggregation_methods": ["count", "last", "max", "mean", "min", "sum"]}, "created_by_user_id": "admin", "created_by_project_id": ""}]};
/** dynamic_aggregates metric ids aggregate [ng] */
const DYNAMIC_AGGREGATES_METRIC_IDS_AGGREGATE_NG: unknown = {"measures": {"aggregated": [["2024-01-01T00:00:00+00:00", 300, 11.8], ["2024-01-01T00:05:00+00:00", 300, 10], ["2024-01-01T00:03:00+00:00", 60, 5], ["2024-01-01T00:04:00+00:00", 60, 12], ["2024-01-01T00:05:00+00:00", 60, 19], ["2024-01-01T00:06:00+00:00", 60, 3], ["2024-01-01T00:07:00+00:00", 60, 10], ["2024-01-01T00:08:00+00:00", 60, 17]]}, "references": [{"id": "<metric r1/cpu_util>", "creator": "admin", "name": "cpu_util", "unit": null, "resource_id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "archive_policy": {"name": "grafana-policy", "back_window": 0, "definition": [{"timespan": "1 day, 0:00:00", "granularity": "0:01:00", "points": 1440}, {"timespan": "1 day, 0:00:00", "granularity": "0:05:00", "points": 288}], "aggregation_methods": ["count", "last", "max", "mean", "min", "sum"]}, "created_by_user_id": "admin", "created_by_project_id": ""}, {"id": "<metric r2/cpu_util>", "creator": "admin", "name": "cpu_util", "unit": null, "resource_id": "5898ba55-bbea-460f-985c-3d1243348304", "archive_policy": {"name": "grafana-policy", "back_window": 0, "definition": [{"timespan": "1 day, 0:00:00", "granularity": "0:01:00", "points": 1440}, {"timespan": "1 day, 0:00:00", "granularity": "0:05:00", "points": 288}], "aggregation_methods": ["count", "last", "max", "mean", "min", "sum"]}, "created_by_user_id": "admin", "created_by_project_id": ""}]};
/** dynamic_aggregates metric ids aggregate [fetch granularity=60] */
const DYNAMIC_AGGREGATES_METRIC_IDS_AGGREGATE_FETCH_GRANULARITY_60: unknown = {"measures": {"aggregated": [["2024-01-01T00:03:00+00:00", 60, 5], ["2024-01-01T00:04:00+00:00", 60, 12], ["2024-01-01T00:05:00+00:00", 60, 19], ["2024-01-01T00:06:00+00:00", 60, 3], ["2024-01-01T00:07:00+00:00", 60, 10], ["2024-01-01T00:08:00+00:00", 60, 17]]}, "references": [{"id": "<metric r1/cpu_util>", "creator": "admin", "name": "cpu_util", "unit": null, "resource_id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "archive_policy": {"name": "grafana-policy", "back_window": 0, "definition": [{"timespan": "1 day, 0:00:00", "granularity": "0:01:00", "points": 1440}, {"timespan": "1 day, 0:00:00", "granularity": "0:05:00", "points": 288}], "aggregation_methods": ["count", "last", "max", "mean", "min", "sum"]}, "created_by_user_id": "admin", "created_by_project_id": ""}, {"id": "<metric r2/cpu_util>", "creator": "admin", "name": "cpu_util", "unit": null, "resource_id": "5898ba55-bbea-460f-985c-3d1243348304", "archive_policy": {"name": "grafana-policy", "back_window": 0, "definition": [{"timespan": "1 day, 0:00:00", "granularity": "0:01:00", "points": 1440}, {"timespan": "1 day, 0:00:00", "granularity": "0:05:00", "points": 288}], "aggregation_methods": ["count", "last", "max", "mean", "min", "sum"]}, "created_by_user_id": "admin", "created_by_project_id": ""}]};
/** dynamic_aggregates metric ids two [ng] */
const DYNAMIC_AGGREGATES_METRIC_IDS_TWO_NG: unknown = {"measures": {"<metric r1/cpu_util>": {"mean": [["2024-01-01T00:00:00+00:00", 300, 11.3], ["2024-01-01T00:05:00+00:00", 300, 9.5], ["2024-01-01T00:03:00+00:00", 60, 4.5], ["2024-01-01T00:04:00+00:00", 60, 11.5], ["2024-01-01T00:05:00+00:00", 60, 18.5], ["2024-01-01T00:06:00+00:00", 60, 2.5], ["2024-01-01T00:07:00+00:00", 60, 9.5], ["2024-01-01T00:08:00+00:00", 60, 16.5]]}, "<metric lone>": {"max": [["2024-01-01T00:00:00+00:00", 300, 18.5], ["2024-01-01T00:05:00+00:00", 300, 21.5], ["2024-01-01T00:03:00+00:00", 60, 16.5], ["2024-01-01T00:04:00+00:00", 60, 0.5], ["2024-01-01T00:05:00+00:00", 60, 7.5], ["2024-01-01T00:06:00+00:00", 60, 14.5], ["2024-01-01T00:07:00+00:00", 60, 21.5], ["2024-01-01T00:08:00+00:00", 60, 5.5]]}}, "references": [{"id": "<metric lone>", "creator": "admin", "name": "lone", "unit": "ms", "resource_id": null, "archive_policy": {"name": "grafana-policy", "back_window": 0, "definition": [{"timespan": "1 day, 0:00:00", "granularity": "0:01:00", "points": 1440}, {"timespan": "1 day, 0:00:00", "granularity": "0:05:00", "points": 288}], "aggregation_methods": ["count", "last", "max", "mean", "min", "sum"]}, "created_by_user_id": "admin", "created_by_project_id": ""}, {"id": "<metric r1/cpu_util>", "creator": "admin", "name": "cpu_util", "unit": null, "resource_id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "archive_policy": {"name": "grafana-policy", "back_window": 0, "definition": [{"timespan": "1 day, 0:00:00", "granularity": "0:01:00", "points": 1440}, {"timespan": "1 day, 0:00:00", "granularity": "0:05:00", "points": 288}], "aggregation_methods": ["count", "last", "max", "mean", "min", "sum"]}, "created_by_user_id": "admin", "created_by_project_id": ""}]};
/** dynamic_aggregates metric ids two [fetch granularity=60] */
const DYNAMIC_AGGREGATES_METRIC_IDS_TWO_FETCH_GRANULARITY_60: unknown = {"measures": {"<metric r1/cpu_util>": {"mean": [["2024-01-01T00:03:00+00:00", 60, 4.5], ["2024-01-01T00:04:00+00:00", 60, 11.5], ["2024-01-01T00:05:00+00:00", 60, 18.5], ["2024-01-01T00:06:00+00:00", 60, 2.5], ["2024-01-01T00:07:00+00:00", 60, 9.5], ["2024-01-01T00:08:00+00:00", 60, 16.5]]}, "<metric lone>": {"max": [["2024-01-01T00:03:00+00:00", 60, 16.5], ["2024-01-01T00:04:00+00:00", 60, 0.5], ["2024-01-01T00:05:00+00:00", 60, 7.5], ["2024-01-01T00:06:00+00:00", 60, 14.5], ["2024-01-01T00:07:00+00:00", 60, 21.5], ["2024-01-01T00:08:00+00:00", 60, 5.5]]}}, "references": [{"id": "<metric lone>", "creator": "admin", "name": "lone", "unit": "ms", "resource_id": null, "archive_policy": {"name": "grafana-policy", "back_window": 0, "definition": [{"timespan": "1 day, 0:00:00", "granularity": "0:01:00", "points": 1440}, {"timespan": "1 day, 0:00:00", "granularity": "0:05:00", "points": 288}], "aggregation_methods": ["count", "last", "max", "mean", "min", "sum"]}, "created_by_user_id": "admin", "created_by_project_id": ""}, {"id": "<metric r1/cpu_util>", "creator": "admin", "name": "cpu_util", "unit": null, "resource_id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "archive_policy": {"name": "grafana-policy", "back_window": 0, "definition": [{"timespan": "1 day, 0:00:00", "granularity": "0:01:00", "points": 1440}, {"timespan": "1 day, 0:00:00", "granularity": "0:05:00", "points": 288}], "aggregation_methods": ["count", "last", "max", "mean", "min", "sum"]}, "created_by_user_id": "admin", "created_by_project_id": ""}]};
/** dynamic_aggregates search qs [ng] */
const DYNAMIC_AGGREGATES_SEARCH_QS_NG: unknown = {"measures": {"1e8da77f-fa82-4e67-aba9-270c5ae8cbca": {"cpu_util": {"mean": [["2024-01-01T00:00:00+00:00", 300, 11.3], ["2024-01-01T00:05:00+00:00", 300, 9.5], ["2024-01-01T00:03:00+00:00", 60, 4.5], ["2024-01-01T00:04:00+00:00", 60, 11.5], ["2024-01-01T00:05:00+00:00", 60, 18.5], ["2024-01-01T00:06:00+00:00", 60, 2.5], ["2024-01-01T00:07:00+00:00", 60, 9.5], ["2024-01-01T00:08:00+00:00", 60, 16.5]]}}, "5898ba55-bbea-460f-985c-3d1243348304": {"cpu_util": {"mean": [["2024-01-01T00:00:00+00:00", 300, 12.3], ["2024-01-01T00:05:00+00:00", 300, 10.5], ["2024-01-01T00:03:00+00:00", 60, 5.5], ["2024-01-01T00:04:00+00:00", 60, 12.5], ["2024-01-01T00:05:00+00:00", 60, 19.5], ["2024-01-01T00:06:00+00:00", 60, 3.5], ["2024-01-01T00:07:00+00:00", 60, 10.5], ["2024-01-01T00:08:00+00:00", 60, 17.5]]}}, "a634173a-e3b8-4119-9eba-fa9a4d971c3b": {"cpu_util": {"mean": [["2024-01-01T00:00:00+00:00", 300, 13.3], ["2024-01-01T00:05:00+00:00", 300, 11.5], ["2024-01-01T00:03:00+00:00", 60, 6.5], ["2024-01-01T00:04:00+00:00", 60, 13.5], ["2024-01-01T00:05:00+00:00", 60, 20.5], ["2024-01-01T00:06:00+00:00", 60, 4.5], ["2024-01-01T00:07:00+00:00", 60, 11.5], ["2024-01-01T00:08:00+00:00", 60, 18.5]]}}}, "references": [{"creator": "admin", "started_at": "2024-01-01T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000001", "original_resource_id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "type": "grafana_instance", "display_name": "vm1", "host": "compute1", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_time": "<metric r1/cpu_time>", "cpu_util": "<metric r1/cpu_util>"}, "created_by_user_id": "admin", "created_by_project_id": ""}, {"creator": "admin", "started_at": "2024-01-02T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000002", "original_resource_id": "5898ba55-bbea-460f-985c-3d1243348304", "id": "5898ba55-bbea-460f-985c-3d1243348304", "type": "grafana_instance", "display_name": "vm2", "host": "compute1", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_time": "<metric r2/cpu_time>", "cpu_util": "<metric r2/cpu_util>"}, "created_by_user_id": "admin", "created_by_project_id": ""}, {"creator": "admin", "started_at": "2024-01-03T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000001", "original_resource_id": "a634173a-e3b8-4119-9eba-fa9a4d971c3b", "id": "a634173a-e3b8-4119-9eba-fa9a4d971c3b", "type": "grafana_instance", "display_name": "vm 3", "host": "compute2", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_util": "<metric r3/cpu_util>", "memory": "<metric r3/memory>"}, "created_by_user_id": "admin", "created_by_project_id": ""}]};
/** page dynamic_aggregates search qs [fetch granularity=60] */
const PAGE_DYNAMIC_AGGREGATES_SEARCH_QS_FETCH_GRANULARITY_60 = "<html>\n <head>\n  <title>400 Bad Request</title>\n </head>\n <body>\n  <h1>400 Bad Request</h1>\n  The server could not comply with the request since it is either malformed or otherwise incorrect.<br /><br />\nInvalid pagination: `Sort key supplied is invalid: null&#x27;\n\n\n </body>\n</html>";
/** dynamic_aggregates search qs aggregated [ng] */
const DYNAMIC_AGGREGATES_SEARCH_QS_AGGREGATED_NG: unknown = {"measures": {"aggregated": [["2024-01-01T00:00:00+00:00", 300, 73.80000000000001], ["2024-01-01T00:05:00+00:00", 300, 63], ["2024-01-01T00:03:00+00:00", 60, 33], ["2024-01-01T00:04:00+00:00", 60, 75], ["2024-01-01T00:05:00+00:00", 60, 117], ["2024-01-01T00:06:00+00:00", 60, 21], ["2024-01-01T00:07:00+00:00", 60, 63], ["2024-01-01T00:08:00+00:00", 60, 105]]}, "references": [{"creator": "admin", "started_at": "2024-01-01T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000001", "original_resource_id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "type": "grafana_instance", "display_name": "vm1", "host": "compute1", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_time": "<metric r1/cpu_time>", "cpu_util": "<metric r1/cpu_util>"}, "created_by_user_id": "admin", "created_by_project_id": ""}, {"creator": "admin", "started_at": "2024-01-02T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000002", "original_resource_id": "5898ba55-bbea-460f-985c-3d1243348304", "id": "5898ba55-bbea-460f-985c-3d1243348304", "type": "grafana_instance", "display_name": "vm2", "host": "compute1", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_time": "<metric r2/cpu_time>", "cpu_util": "<metric r2/cpu_util>"}, "created_by_user_id": "admin", "created_by_project_id": ""}, {"creator": "admin", "started_at": "2024-01-03T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000001", "original_resource_id": "a634173a-e3b8-4119-9eba-fa9a4d971c3b", "id": "a634173a-e3b8-4119-9eba-fa9a4d971c3b", "type": "grafana_instance", "display_name": "vm 3", "host": "compute2", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_util": "<metric r3/cpu_util>", "memory": "<metric r3/memory>"}, "created_by_user_id": "admin", "created_by_project_id": ""}]};
/** dynamic_aggregates search qs two metrics [ng] */
const DYNAMIC_AGGREGATES_SEARCH_QS_TWO_METRICS_NG: unknown = {"measures": {"1e8da77f-fa82-4e67-aba9-270c5ae8cbca": {"cpu_util": {"mean": [["2024-01-01T00:00:00+00:00", 300, 11.3], ["2024-01-01T00:05:00+00:00", 300, 9.5], ["2024-01-01T00:03:00+00:00", 60, 4.5], ["2024-01-01T00:04:00+00:00", 60, 11.5], ["2024-01-01T00:05:00+00:00", 60, 18.5], ["2024-01-01T00:06:00+00:00", 60, 2.5], ["2024-01-01T00:07:00+00:00", 60, 9.5], ["2024-01-01T00:08:00+00:00", 60, 16.5]]}, "cpu_time": {"max": [["2024-01-01T00:00:00+00:00", 300, 16.5], ["2024-01-01T00:05:00+00:00", 300, 21.5], ["2024-01-01T00:03:00+00:00", 60, 0.5], ["2024-01-01T00:04:00+00:00", 60, 7.5], ["2024-01-01T00:05:00+00:00", 60, 14.5], ["2024-01-01T00:06:00+00:00", 60, 21.5], ["2024-01-01T00:07:00+00:00", 60, 5.5], ["2024-01-01T00:08:00+00:00", 60, 12.5]]}}, "5898ba55-bbea-460f-985c-3d1243348304": {"cpu_util": {"mean": [["2024-01-01T00:00:00+00:00", 300, 12.3], ["2024-01-01T00:05:00+00:00", 300, 10.5], ["2024-01-01T00:03:00+00:00", 60, 5.5], ["2024-01-01T00:04:00+00:00", 60, 12.5], ["2024-01-01T00:05:00+00:00", 60, 19.5], ["2024-01-01T00:06:00+00:00", 60, 3.5], ["2024-01-01T00:07:00+00:00", 60, 10.5], ["2024-01-01T00:08:00+00:00", 60, 17.5]]}, "cpu_time": {"max": [["2024-01-01T00:00:00+00:00", 300, 17.5], ["2024-01-01T00:05:00+00:00", 300, 22.5], ["2024-01-01T00:03:00+00:00", 60, 1.5], ["2024-01-01T00:04:00+00:00", 60, 8.5], ["2024-01-01T00:05:00+00:00", 60, 15.5], ["2024-01-01T00:06:00+00:00", 60, 22.5], ["2024-01-01T00:07:00+00:00", 60, 6.5], ["2024-01-01T00:08:00+00:00", 60, 13.5]]}}}, "references": [{"creator": "admin", "started_at": "2024-01-01T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000001", "original_resource_id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "type": "grafana_instance", "display_name": "vm1", "host": "compute1", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_time": "<metric r1/cpu_time>", "cpu_util": "<metric r1/cpu_util>"}, "created_by_user_id": "admin", "created_by_project_id": ""}, {"creator": "admin", "started_at": "2024-01-02T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000002", "original_resource_id": "5898ba55-bbea-460f-985c-3d1243348304", "id": "5898ba55-bbea-460f-985c-3d1243348304", "type": "grafana_instance", "display_name": "vm2", "host": "compute1", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_time": "<metric r2/cpu_time>", "cpu_util": "<metric r2/cpu_util>"}, "created_by_user_id": "admin", "created_by_project_id": ""}]};
/** page dynamic_aggregates search JSON string [ng] */
const PAGE_DYNAMIC_AGGREGATES_SEARCH_JSON_STRING_NG = "<html>\n <head>\n  <title>400 Bad Request</title>\n </head>\n <body>\n  <h1>400 Bad Request</h1>\n  The server could not comply with the request since it is either malformed or otherwise incorrect.<br /><br />\nInvalid filter: Expected &#x27;&#8744;&#x27; term, found &#x27;{&#x27;  (at char 0), (line:1, col:1)\n\n\n </body>\n</html>";
/** dynamic_aggregates search generic [ng] */
const DYNAMIC_AGGREGATES_SEARCH_GENERIC_NG: unknown = {"measures": {"5898ba55-bbea-460f-985c-3d1243348304": {"cpu_util": {"mean": [["2024-01-01T00:00:00+00:00", 300, 12.3], ["2024-01-01T00:05:00+00:00", 300, 10.5], ["2024-01-01T00:03:00+00:00", 60, 5.5], ["2024-01-01T00:04:00+00:00", 60, 12.5], ["2024-01-01T00:05:00+00:00", 60, 19.5], ["2024-01-01T00:06:00+00:00", 60, 3.5], ["2024-01-01T00:07:00+00:00", 60, 10.5], ["2024-01-01T00:08:00+00:00", 60, 17.5]]}}}, "references": [{"creator": "admin", "started_at": "2024-01-02T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000002", "original_resource_id": "5898ba55-bbea-460f-985c-3d1243348304", "id": "5898ba55-bbea-460f-985c-3d1243348304", "type": "grafana_instance", "revision_end": null, "metrics": {"cpu_time": "<metric r2/cpu_time>", "cpu_util": "<metric r2/cpu_util>"}, "created_by_user_id": "admin", "created_by_project_id": ""}]};
/** dynamic_aggregates groupby host [ng] */
const DYNAMIC_AGGREGATES_GROUPBY_HOST_NG: unknown = [{"group": {"host": "compute1"}, "measures": {"measures": {"1e8da77f-fa82-4e67-aba9-270c5ae8cbca": {"cpu_util": {"mean": [["2024-01-01T00:00:00+00:00", 300, 11.3], ["2024-01-01T00:05:00+00:00", 300, 9.5], ["2024-01-01T00:03:00+00:00", 60, 4.5], ["2024-01-01T00:04:00+00:00", 60, 11.5], ["2024-01-01T00:05:00+00:00", 60, 18.5], ["2024-01-01T00:06:00+00:00", 60, 2.5], ["2024-01-01T00:07:00+00:00", 60, 9.5], ["2024-01-01T00:08:00+00:00", 60, 16.5]]}}, "5898ba55-bbea-460f-985c-3d1243348304": {"cpu_util": {"mean": [["2024-01-01T00:00:00+00:00", 300, 12.3], ["2024-01-01T00:05:00+00:00", 300, 10.5], ["2024-01-01T00:03:00+00:00", 60, 5.5], ["2024-01-01T00:04:00+00:00", 60, 12.5], ["2024-01-01T00:05:00+00:00", 60, 19.5], ["2024-01-01T00:06:00+00:00", 60, 3.5], ["2024-01-01T00:07:00+00:00", 60, 10.5], ["2024-01-01T00:08:00+00:00", 60, 17.5]]}}}, "references": [{"creator": "admin", "started_at": "2024-01-01T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000001", "original_resource_id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "type": "grafana_instance", "display_name": "vm1", "host": "compute1", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_time": "<metric r1/cpu_time>", "cpu_util": "<metric r1/cpu_util>"}, "created_by_user_id": "admin", "created_by_project_id": ""}, {"creator": "admin", "started_at": "2024-01-02T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000002", "original_resource_id": "5898ba55-bbea-460f-985c-3d1243348304", "id": "5898ba55-bbea-460f-985c-3d1243348304", "type": "grafana_instance", "display_name": "vm2", "host": "compute1", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_time": "<metric r2/cpu_time>", "cpu_util": "<metric r2/cpu_util>"}, "created_by_user_id": "admin", "created_by_project_id": ""}]}}, {"group": {"host": "compute2"}, "measures": {"measures": {"a634173a-e3b8-4119-9eba-fa9a4d971c3b": {"cpu_util": {"mean": [["2024-01-01T00:00:00+00:00", 300, 13.3], ["2024-01-01T00:05:00+00:00", 300, 11.5], ["2024-01-01T00:03:00+00:00", 60, 6.5], ["2024-01-01T00:04:00+00:00", 60, 13.5], ["2024-01-01T00:05:00+00:00", 60, 20.5], ["2024-01-01T00:06:00+00:00", 60, 4.5], ["2024-01-01T00:07:00+00:00", 60, 11.5], ["2024-01-01T00:08:00+00:00", 60, 18.5]]}}}, "references": [{"creator": "admin", "started_at": "2024-01-03T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000001", "original_resource_id": "a634173a-e3b8-4119-9eba-fa9a4d971c3b", "id": "a634173a-e3b8-4119-9eba-fa9a4d971c3b", "type": "grafana_instance", "display_name": "vm 3", "host": "compute2", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_util": "<metric r3/cpu_util>", "memory": "<metric r3/memory>"}, "created_by_user_id": "admin", "created_by_project_id": ""}]}}];
/** dynamic_aggregates groupby host [fetch granularity=60] */
const DYNAMIC_AGGREGATES_GROUPBY_HOST_FETCH_GRANULARITY_60: unknown = [{"group": {"host": "compute1"}, "measures": {"measures": {"1e8da77f-fa82-4e67-aba9-270c5ae8cbca": {"cpu_util": {"mean": [["2024-01-01T00:03:00+00:00", 60, 4.5], ["2024-01-01T00:04:00+00:00", 60, 11.5], ["2024-01-01T00:05:00+00:00", 60, 18.5], ["2024-01-01T00:06:00+00:00", 60, 2.5], ["2024-01-01T00:07:00+00:00", 60, 9.5], ["2024-01-01T00:08:00+00:00", 60, 16.5]]}}, "5898ba55-bbea-460f-985c-3d1243348304": {"cpu_util": {"mean": [["2024-01-01T00:03:00+00:00", 60, 5.5], ["2024-01-01T00:04:00+00:00", 60, 12.5], ["2024-01-01T00:05:00+00:00", 60, 19.5], ["2024-01-01T00:06:00+00:00", 60, 3.5], ["2024-01-01T00:07:00+00:00", 60, 10.5], ["2024-01-01T00:08:00+00:00", 60, 17.5]]}}}, "references": [{"creator": "admin", "started_at": "2024-01-01T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000001", "original_resource_id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "type": "grafana_instance", "display_name": "vm1", "host": "compute1", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_time": "<metric r1/cpu_time>", "cpu_util": "<metric r1/cpu_util>"}, "created_by_user_id": "admin", "created_by_project_id": ""}, {"creator": "admin", "started_at": "2024-01-02T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000002", "original_resource_id": "5898ba55-bbea-460f-985c-3d1243348304", "id": "5898ba55-bbea-460f-985c-3d1243348304", "type": "grafana_instance", "display_name": "vm2", "host": "compute1", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_time": "<metric r2/cpu_time>", "cpu_util": "<metric r2/cpu_util>"}, "created_by_user_id": "admin", "created_by_project_id": ""}]}}, {"group": {"host": "compute2"}, "measures": {"measures": {"a634173a-e3b8-4119-9eba-fa9a4d971c3b": {"cpu_util": {"mean": [["2024-01-01T00:03:00+00:00", 60, 6.5], ["2024-01-01T00:04:00+00:00", 60, 13.5], ["2024-01-01T00:05:00+00:00", 60, 20.5], ["2024-01-01T00:06:00+00:00", 60, 4.5], ["2024-01-01T00:07:00+00:00", 60, 11.5], ["2024-01-01T00:08:00+00:00", 60, 18.5]]}}}, "references": [{"creator": "admin", "started_at": "2024-01-03T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000001", "original_resource_id": "a634173a-e3b8-4119-9eba-fa9a4d971c3b", "id": "a634173a-e3b8-4119-9eba-fa9a4d971c3b", "type": "grafana_instance", "display_name": "vm 3", "host": "compute2", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_util": "<metric r3/cpu_util>", "memory": "<metric r3/memory>"}, "created_by_user_id": "admin", "created_by_project_id": ""}]}}];
/** dynamic_aggregates groupby host,project_id aggregated [ng] */
const DYNAMIC_AGGREGATES_GROUPBY_HOST_PROJECT_ID_AGGREGATED_NG: unknown = [{"group": {"host": "compute1", "project_id": "a1b2c3d4-0000-4000-8000-000000000001"}, "measures": {"measures": {"aggregated": [["2024-01-01T00:00:00+00:00", 300, 11.3], ["2024-01-01T00:05:00+00:00", 300, 9.5], ["2024-01-01T00:03:00+00:00", 60, 4.5], ["2024-01-01T00:04:00+00:00", 60, 11.5], ["2024-01-01T00:05:00+00:00", 60, 18.5], ["2024-01-01T00:06:00+00:00", 60, 2.5], ["2024-01-01T00:07:00+00:00", 60, 9.5], ["2024-01-01T00:08:00+00:00", 60, 16.5]]}, "references": [{"creator": "admin", "started_at": "2024-01-01T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000001", "original_resource_id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "type": "grafana_instance", "display_name": "vm1", "host": "compute1", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_time": "<metric r1/cpu_time>", "cpu_util": "<metric r1/cpu_util>"}, "created_by_user_id": "admin", "created_by_project_id": ""}]}}, {"group": {"host": "compute1", "project_id": "a1b2c3d4-0000-4000-8000-000000000002"}, "measures": {"measures": {"aggregated": [["2024-01-01T00:00:00+00:00", 300, 12.3], ["2024-01-01T00:05:00+00:00", 300, 10.5], ["2024-01-01T00:03:00+00:00", 60, 5.5], ["2024-01-01T00:04:00+00:00", 60, 12.5], ["2024-01-01T00:05:00+00:00", 60, 19.5], ["2024-01-01T00:06:00+00:00", 60, 3.5], ["2024-01-01T00:07:00+00:00", 60, 10.5], ["2024-01-01T00:08:00+00:00", 60, 17.5]]}, "references": [{"creator": "admin", "started_at": "2024-01-02T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000002", "original_resource_id": "5898ba55-bbea-460f-985c-3d1243348304", "id": "5898ba55-bbea-460f-985c-3d1243348304", "type": "grafana_instance", "display_name": "vm2", "host": "compute1", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_time": "<metric r2/cpu_time>", "cpu_util": "<metric r2/cpu_util>"}, "created_by_user_id": "admin", "created_by_project_id": ""}]}}, {"group": {"host": "compute2", "project_id": "a1b2c3d4-0000-4000-8000-000000000001"}, "measures": {"measures": {"aggregated": [["2024-01-01T00:00:00+00:00", 300, 13.3], ["2024-01-01T00:05:00+00:00", 300, 11.5], ["2024-01-01T00:03:00+00:00", 60, 6.5], ["2024-01-01T00:04:00+00:00", 60, 13.5], ["2024-01-01T00:05:00+00:00", 60, 20.5], ["2024-01-01T00:06:00+00:00", 60, 4.5], ["2024-01-01T00:07:00+00:00", 60, 11.5], ["2024-01-01T00:08:00+00:00", 60, 18.5]]}, "references": [{"creator": "admin", "started_at": "2024-01-03T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000001", "original_resource_id": "a634173a-e3b8-4119-9eba-fa9a4d971c3b", "id": "a634173a-e3b8-4119-9eba-fa9a4d971c3b", "type": "grafana_instance", "display_name": "vm 3", "host": "compute2", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_util": "<metric r3/cpu_util>", "memory": "<metric r3/memory>"}, "created_by_user_id": "admin", "created_by_project_id": ""}]}}];
/** dynamic_aggregates groupby host,project_id aggregated [fetch granularity=60] */
const DYNAMIC_AGGREGATES_GROUPBY_HOST_PROJECT_ID_AGGREGATED_FETCH_: unknown = [{"group": {"host": "compute1", "project_id": "a1b2c3d4-0000-4000-8000-000000000001"}, "measures": {"measures": {"aggregated": [["2024-01-01T00:03:00+00:00", 60, 4.5], ["2024-01-01T00:04:00+00:00", 60, 11.5], ["2024-01-01T00:05:00+00:00", 60, 18.5], ["2024-01-01T00:06:00+00:00", 60, 2.5], ["2024-01-01T00:07:00+00:00", 60, 9.5], ["2024-01-01T00:08:00+00:00", 60, 16.5]]}, "references": [{"creator": "admin", "started_at": "2024-01-01T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000001", "original_resource_id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "type": "grafana_instance", "display_name": "vm1", "host": "compute1", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_time": "<metric r1/cpu_time>", "cpu_util": "<metric r1/cpu_util>"}, "created_by_user_id": "admin", "created_by_project_id": ""}]}}, {"group": {"host": "compute1", "project_id": "a1b2c3d4-0000-4000-8000-000000000002"}, "measures": {"measures": {"aggregated": [["2024-01-01T00:03:00+00:00", 60, 5.5], ["2024-01-01T00:04:00+00:00", 60, 12.5], ["2024-01-01T00:05:00+00:00", 60, 19.5], ["2024-01-01T00:06:00+00:00", 60, 3.5], ["2024-01-01T00:07:00+00:00", 60, 10.5], ["2024-01-01T00:08:00+00:00", 60, 17.5]]}, "references": [{"creator": "admin", "started_at": "2024-01-02T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000002", "original_resource_id": "5898ba55-bbea-460f-985c-3d1243348304", "id": "5898ba55-bbea-460f-985c-3d1243348304", "type": "grafana_instance", "display_name": "vm2", "host": "compute1", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_time": "<metric r2/cpu_time>", "cpu_util": "<metric r2/cpu_util>"}, "created_by_user_id": "admin", "created_by_project_id": ""}]}}, {"group": {"host": "compute2", "project_id": "a1b2c3d4-0000-4000-8000-000000000001"}, "measures": {"measures": {"aggregated": [["2024-01-01T00:03:00+00:00", 60, 6.5], ["2024-01-01T00:04:00+00:00", 60, 13.5], ["2024-01-01T00:05:00+00:00", 60, 20.5], ["2024-01-01T00:06:00+00:00", 60, 4.5], ["2024-01-01T00:07:00+00:00", 60, 11.5], ["2024-01-01T00:08:00+00:00", 60, 18.5]]}, "references": [{"creator": "admin", "started_at": "2024-01-03T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000001", "original_resource_id": "a634173a-e3b8-4119-9eba-fa9a4d971c3b", "id": "a634173a-e3b8-4119-9eba-fa9a4d971c3b", "type": "grafana_instance", "display_name": "vm 3", "host": "compute2", "server_group": "autoscaling", "revision_end": null, "metrics": {"cpu_util": "<metric r3/cpu_util>", "memory": "<metric r3/memory>"}, "created_by_user_id": "admin", "created_by_project_id": ""}]}}];
/** page dynamic_aggregates bad operations [ng] */
const PAGE_DYNAMIC_AGGREGATES_BAD_OPERATIONS_NG = "<html>\n <head>\n  <title>400 Bad Request</title>\n </head>\n <body>\n  <h1>400 Bad Request</h1>\n  The server could not comply with the request since it is either malformed or otherwise incorrect.<br /><br />\n{&#x27;cause&#x27;: &#x27;Invalid operations&#x27;, &#x27;reason&#x27;: &#x27;Fail to parse the operations string&#x27;, &#x27;detail&#x27;: &quot;Expected &#x27;)&#x27;, found end of text  (at char 16), (line:1, col:17)&quot;}\n\n\n </body>\n</html>";
/** description dynamic_aggregates bad operations [ng] */
const DESCRIPTION_DYNAMIC_AGGREGATES_BAD_OPERATIONS_NG: unknown = {"cause": "Invalid operations", "reason": "Fail to parse the operations string", "detail": "Expected ')', found end of text  (at char 16), (line:1, col:17)"};
/** page dynamic_aggregates unknown metric name [ng] */
const PAGE_DYNAMIC_AGGREGATES_UNKNOWN_METRIC_NAME_NG = "<html>\n <head>\n  <title>400 Bad Request</title>\n </head>\n <body>\n  <h1>400 Bad Request</h1>\n  The server could not comply with the request since it is either malformed or otherwise incorrect.<br /><br />\n{&#x27;cause&#x27;: &#x27;Metrics not found&#x27;, &#x27;detail&#x27;: {&#x27;nope&#x27;}}\n\n\n </body>\n</html>";
/** templating resources() filter attrs=id,display_name [ng] */
const TEMPLATING_RESOURCES_FILTER_ATTRS_ID_DISPLAY_NAME_NG: unknown = [{"id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "display_name": "vm1"}, {"id": "5898ba55-bbea-460f-985c-3d1243348304", "display_name": "vm2"}, {"id": "a634173a-e3b8-4119-9eba-fa9a4d971c3b", "display_name": "vm 3"}];
/** templating resources() JSON attrs=host,id [ng] */
const TEMPLATING_RESOURCES_JSON_ATTRS_HOST_ID_NG: unknown = [{"id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "host": "compute1"}, {"id": "5898ba55-bbea-460f-985c-3d1243348304", "host": "compute1"}, {"id": "a634173a-e3b8-4119-9eba-fa9a4d971c3b", "host": "compute2"}];
/** templating resources() attrs=metrics [ng] */
const TEMPLATING_RESOURCES_ATTRS_METRICS_NG: unknown = [{"id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "metrics": {"cpu_time": "<metric r1/cpu_time>", "cpu_util": "<metric r1/cpu_util>"}}, {"id": "5898ba55-bbea-460f-985c-3d1243348304", "metrics": {"cpu_time": "<metric r2/cpu_time>", "cpu_util": "<metric r2/cpu_util>"}}, {"id": "a634173a-e3b8-4119-9eba-fa9a4d971c3b", "metrics": {"cpu_util": "<metric r3/cpu_util>", "memory": "<metric r3/memory>"}}];
/** templating resources() attrs unknown [ng] */
const TEMPLATING_RESOURCES_ATTRS_UNKNOWN_NG: unknown = [{"id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca"}, {"id": "5898ba55-bbea-460f-985c-3d1243348304"}, {"id": "a634173a-e3b8-4119-9eba-fa9a4d971c3b"}];
/** templating metrics() GET v1/resource/generic/ID [ng] */
const TEMPLATING_METRICS_GET_V1_RESOURCE_GENERIC_ID_NG: unknown = {"creator": "admin", "started_at": "2024-01-01T00:00:00+00:00", "revision_start": "<time>", "ended_at": null, "user_id": "grafana-user", "project_id": "a1b2c3d4-0000-4000-8000-000000000001", "original_resource_id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "id": "1e8da77f-fa82-4e67-aba9-270c5ae8cbca", "type": "grafana_instance", "revision_end": null, "metrics": {"cpu_time": "<metric r1/cpu_time>", "cpu_util": "<metric r1/cpu_util>"}, "created_by_user_id": "admin", "created_by_project_id": ""};
/** page templating metrics() unknown resource [ng] */
const PAGE_TEMPLATING_METRICS_UNKNOWN_RESOURCE_NG = "<html>\n <head>\n  <title>404 Not Found</title>\n </head>\n <body>\n  <h1>404 Not Found</h1>\n  The resource could not be found.<br /><br />\nResource 00000000-0000-4000-8000-00000000dead does not exist\n\n\n </body>\n</html>";
/** page unknown path */
const PAGE_UNKNOWN_PATH = "<html>\n <head>\n  <title>404 Not Found</title>\n </head>\n <body>\n  <h1>404 Not Found</h1>\n  The resource could not be found.<br /><br />\n\n\n\n </body>\n</html>";
/** page token mode GET v1/resource_type */
const PAGE_TOKEN_MODE_GET_V1_RESOURCE_TYPE = "<html>\n <head>\n  <title>401 Unauthorized</title>\n </head>\n <body>\n  <h1>401 Unauthorized</h1>\n  This server could not verify that you are authorized to access the document you requested. Either you supplied the wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required.<br /><br />\n\n\n\n </body>\n</html>";

// ---------------------------------------------------------------------------
// The requests, as Grafana sends them

const SHAPES: Shape[] = [
  {
    name: "testDatasource GET v1/resource [ng]",
    source: "608",
    method: "GET",
    path: "/v1/resource",
    status: 200,
    json: TESTDATASOURCE_GET_V1_RESOURCE_NG,
  },
  {
    name: "requireVersion GET / [ng]",
    source: "677",
    method: "GET",
    path: "/",
    status: 200,
    json: REQUIREVERSION_GET_NG,
  },
  {
    name: "getResourceTypes GET v1/resource_type [ng]",
    source: "659",
    method: "GET",
    path: "/v1/resource_type",
    status: 200,
    json: GETRESOURCETYPES_GET_V1_RESOURCE_TYPE_NG,
  },
  {
    name: "metric mode GET v1/metric/ID [ng]",
    source: "248-251",
    method: "GET",
    path: "/v1/metric/<metric r1/cpu_util>",
    status: 200,
    json: METRIC_MODE_GET_V1_METRIC_ID_NG,
  },
  {
    name: "metric mode GET v1/metric/ID (no resource) [ng]",
    source: "248-251",
    method: "GET",
    path: "/v1/metric/<metric lone>",
    status: 200,
    json: METRIC_MODE_GET_V1_METRIC_ID_NO_RESOURCE_NG,
  },
  {
    name: "metric mode measures aggregation=mean [ng]",
    source: "260-262",
    method: "GET",
    path: "/v1/metric/<metric r1/cpu_util>/measures?aggregation=mean&end=2024-01-01T00:09:00.000Z&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    status: 200,
    json: METRIC_MODE_MEASURES_AGGREGATION_MEAN_NG,
  },
  {
    name: "metric mode measures aggregation=mean [fetch]",
    source: "260-262",
    method: "GET",
    path: "/v1/metric/<metric r1/cpu_util>/measures?aggregation=mean&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=null&fill=null&details=null&groupby=null&metric=null",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "metric mode measures aggregation=mean [fetch granularity=60]",
    source: "260-262",
    method: "GET",
    path: "/v1/metric/<metric r1/cpu_util>/measures?aggregation=mean&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=null&fill=null&details=null&groupby=null&metric=null",
    status: 200,
    json: METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH_GRANULARITY_60,
  },
  {
    name: "metric mode measures aggregation=max [ng]",
    source: "260-262",
    method: "GET",
    path: "/v1/metric/<metric r1/cpu_util>/measures?aggregation=max&end=2024-01-01T00:09:00.000Z&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    status: 200,
    json: METRIC_MODE_MEASURES_AGGREGATION_MAX_NG,
  },
  {
    name: "metric mode measures aggregation=max [fetch]",
    source: "260-262",
    method: "GET",
    path: "/v1/metric/<metric r1/cpu_util>/measures?aggregation=max&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=null&fill=null&details=null&groupby=null&metric=null",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "metric mode measures aggregation=max [fetch granularity=60]",
    source: "260-262",
    method: "GET",
    path: "/v1/metric/<metric r1/cpu_util>/measures?aggregation=max&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=null&fill=null&details=null&groupby=null&metric=null",
    status: 200,
    json: METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH_GRANULARITY_60,
  },
  {
    name: "metric mode measures aggregation=count [ng]",
    source: "260-262",
    method: "GET",
    path: "/v1/metric/<metric r1/cpu_util>/measures?aggregation=count&end=2024-01-01T00:09:00.000Z&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    status: 200,
    json: METRIC_MODE_MEASURES_AGGREGATION_COUNT_NG,
  },
  {
    name: "metric mode measures aggregation=count [fetch]",
    source: "260-262",
    method: "GET",
    path: "/v1/metric/<metric r1/cpu_util>/measures?aggregation=count&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=null&fill=null&details=null&groupby=null&metric=null",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "metric mode measures aggregation=count [fetch granularity=60]",
    source: "260-262",
    method: "GET",
    path: "/v1/metric/<metric r1/cpu_util>/measures?aggregation=count&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=null&fill=null&details=null&groupby=null&metric=null",
    status: 200,
    json: METRIC_MODE_MEASURES_AGGREGATION_COUNT_FETCH_GRANULARITY_60,
  },
  {
    name: "metric mode measures granularity=300 [ng]",
    source: "159-161,260",
    method: "GET",
    path: "/v1/metric/<metric r1/cpu_util>/measures?aggregation=mean&end=2024-01-01T00:09:00.000Z&granularity=300&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    status: 200,
    json: [["2024-01-01T00:00:00+00:00", 300, 11.3], ["2024-01-01T00:05:00+00:00", 300, 9.5]],
  },
  {
    name: "metric mode measures granularity=300 [fetch]",
    source: "159-161,260",
    method: "GET",
    path: "/v1/metric/<metric r1/cpu_util>/measures?aggregation=mean&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=300&filter=null&needed_overlap=null&fill=null&details=null&groupby=null&metric=null",
    status: 200,
    json: [["2024-01-01T00:00:00+00:00", 300, 11.3], ["2024-01-01T00:05:00+00:00", 300, 9.5]],
  },
  {
    name: "metric mode measures unknown aggregation [ng]",
    source: "260",
    method: "GET",
    path: "/v1/metric/<metric r1/cpu_util>/measures?aggregation=std&end=2024-01-01T00:09:00.000Z&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    status: 404,
    html: PAGE_METRIC_MODE_MEASURES_UNKNOWN_AGGREGATION_NG,
    description: DESCRIPTION_METRIC_MODE_MEASURES_UNKNOWN_AGGREGATION_NG,
  },
  {
    name: "metric mode measures unknown aggregation [fetch]",
    source: "260",
    method: "GET",
    path: "/v1/metric/<metric r1/cpu_util>/measures?aggregation=std&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=null&fill=null&details=null&groupby=null&metric=null",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "metric mode measures unknown aggregation [fetch granularity=60]",
    source: "260",
    method: "GET",
    path: "/v1/metric/<metric r1/cpu_util>/measures?aggregation=std&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=null&fill=null&details=null&groupby=null&metric=null",
    status: 404,
    html: PAGE_METRIC_MODE_MEASURES_UNKNOWN_AGGREGATION_NG,
    description: DESCRIPTION_METRIC_MODE_MEASURES_UNKNOWN_AGGREGATION_NG,
  },
  {
    name: "metric mode measures unknown granularity [ng]",
    source: "260",
    method: "GET",
    path: "/v1/metric/<metric r1/cpu_util>/measures?aggregation=mean&end=2024-01-01T00:09:00.000Z&granularity=3600&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    status: 404,
    html: PAGE_METRIC_MODE_MEASURES_UNKNOWN_GRANULARITY_NG,
    description: "Aggregation method 'mean' at granularity '3600.0' for metric <metric r1/cpu_util> does not exist",
  },
  {
    name: "metric mode measures unknown granularity [fetch]",
    source: "260",
    method: "GET",
    path: "/v1/metric/<metric r1/cpu_util>/measures?aggregation=mean&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=3600&filter=null&needed_overlap=null&fill=null&details=null&groupby=null&metric=null",
    status: 404,
    html: PAGE_METRIC_MODE_MEASURES_UNKNOWN_GRANULARITY_NG,
    description: "Aggregation method 'mean' at granularity '3600.0' for metric <metric r1/cpu_util> does not exist",
  },
  {
    name: "metric mode GET unknown metric [ng]",
    source: "249",
    method: "GET",
    path: "/v1/metric/00000000-0000-4000-8000-00000000dead",
    status: 404,
    html: PAGE_METRIC_MODE_GET_UNKNOWN_METRIC_NG,
    description: "Metric 00000000-0000-4000-8000-00000000dead does not exist",
  },
  {
    name: "metric mode no range.to [ng]",
    source: "117",
    method: "GET",
    path: "/v1/metric/<metric lone>/measures?aggregation=max&start=2024-01-01T00:03:00.000Z",
    status: 200,
    json: METRIC_MODE_NO_RANGE_TO_NG,
  },
  {
    name: "metric mode no range.to [fetch]",
    source: "117",
    method: "GET",
    path: "/v1/metric/<metric lone>/measures?aggregation=max&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=null&stop=null&granularity=null&filter=null&needed_overlap=null&fill=null&details=null&groupby=null&metric=null",
    status: 400,
    html: PAGE_METRIC_MODE_NO_RANGE_TO_FETCH,
    description: {"cause": "Argument value error", "detail": "stop", "reason": "Must be a datetime or a timestamp"},
  },
  {
    name: "metric mode no range.to [fetch granularity=60]",
    source: "117",
    method: "GET",
    path: "/v1/metric/<metric lone>/measures?aggregation=max&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=null&stop=null&granularity=60&filter=null&needed_overlap=null&fill=null&details=null&groupby=null&metric=null",
    status: 400,
    html: PAGE_METRIC_MODE_NO_RANGE_TO_FETCH,
    description: {"cause": "Argument value error", "detail": "stop", "reason": "Must be a datetime or a timestamp"},
  },
  {
    name: "resource mode GET v1/resource/TYPE/ID [ng]",
    source: "235-238",
    method: "GET",
    path: "/v1/resource/grafana_instance/1e8da77f-fa82-4e67-aba9-270c5ae8cbca",
    status: 200,
    json: RESOURCE_MODE_GET_V1_RESOURCE_TYPE_ID_NG,
  },
  {
    name: "resource mode measures [ng]",
    source: "240-242",
    method: "GET",
    path: "/v1/resource/grafana_instance/1e8da77f-fa82-4e67-aba9-270c5ae8cbca/metric/cpu_util/measures?aggregation=max&end=2024-01-01T00:09:00.000Z&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    status: 200,
    json: METRIC_MODE_MEASURES_AGGREGATION_MAX_NG,
  },
  {
    name: "resource mode measures [fetch]",
    source: "240-242",
    method: "GET",
    path: "/v1/resource/grafana_instance/1e8da77f-fa82-4e67-aba9-270c5ae8cbca/metric/cpu_util/measures?aggregation=max&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=null&fill=null&details=null&groupby=null&metric=null",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "resource mode measures [fetch granularity=60]",
    source: "240-242",
    method: "GET",
    path: "/v1/resource/grafana_instance/1e8da77f-fa82-4e67-aba9-270c5ae8cbca/metric/cpu_util/measures?aggregation=max&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=null&fill=null&details=null&groupby=null&metric=null",
    status: 200,
    json: METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH_GRANULARITY_60,
  },
  {
    name: "resource mode measures unknown metric [ng]",
    source: "240-242",
    method: "GET",
    path: "/v1/resource/grafana_instance/1e8da77f-fa82-4e67-aba9-270c5ae8cbca/metric/nope/measures?aggregation=max&end=2024-01-01T00:09:00.000Z&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    status: 404,
    html: PAGE_RESOURCE_MODE_MEASURES_UNKNOWN_METRIC_NG,
    description: "Metric nope does not exist",
  },
  {
    name: "resource mode measures unknown metric [fetch]",
    source: "240-242",
    method: "GET",
    path: "/v1/resource/grafana_instance/1e8da77f-fa82-4e67-aba9-270c5ae8cbca/metric/nope/measures?aggregation=max&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=null&fill=null&details=null&groupby=null&metric=null",
    status: 404,
    html: PAGE_RESOURCE_MODE_MEASURES_UNKNOWN_METRIC_NG,
    description: "Metric nope does not exist",
  },
  {
    name: "resource mode measures unknown metric [fetch granularity=60]",
    source: "240-242",
    method: "GET",
    path: "/v1/resource/grafana_instance/1e8da77f-fa82-4e67-aba9-270c5ae8cbca/metric/nope/measures?aggregation=max&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=null&fill=null&details=null&groupby=null&metric=null",
    status: 404,
    html: PAGE_RESOURCE_MODE_MEASURES_UNKNOWN_METRIC_NG,
    description: "Metric nope does not exist",
  },
  {
    name: "resource_search POST search filter=qs [ng]",
    source: "200-202,645-647",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?filter=server_group%3D'autoscaling'",
    status: 200,
    json: RESOURCE_SEARCH_POST_SEARCH_FILTER_QS_NG,
  },
  {
    name: "resource_search POST search filter=qs [fetch]",
    source: "200-202,645-647",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?filter=server_group%3D'autoscaling'",
    status: 200,
    json: RESOURCE_SEARCH_POST_SEARCH_FILTER_QS_NG,
  },
  {
    name: "resource_search POST search filter=qs dq [ng]",
    source: "645-647",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?filter=server_group%3D%22autoscaling%22",
    status: 200,
    json: RESOURCE_SEARCH_POST_SEARCH_FILTER_QS_NG,
  },
  {
    name: "resource_search POST search filter=qs dq [fetch]",
    source: "645-647",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?filter=server_group%3D%22autoscaling%22",
    status: 200,
    json: RESOURCE_SEARCH_POST_SEARCH_FILTER_QS_NG,
  },
  {
    name: "resource_search POST search filter=qs and [ng]",
    source: "645-647",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?filter=server_group%3D'autoscaling'+and+host%3D'compute1'",
    status: 200,
    json: RESOURCE_SEARCH_POST_SEARCH_FILTER_QS_AND_NG,
  },
  {
    name: "resource_search POST search filter=qs and [fetch]",
    source: "645-647",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?filter=server_group%3D'autoscaling'%20and%20host%3D'compute1'",
    status: 200,
    json: RESOURCE_SEARCH_POST_SEARCH_FILTER_QS_AND_NG,
  },
  {
    name: "resource_search POST search filter=templated in-list [ng]",
    source: "138,742-751",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?filter=server_group%3D'autoscaling'+and+display_name+in+%5B%22vm1%22,+%22vm+3%22%5D",
    status: 200,
    json: RESOURCE_SEARCH_POST_SEARCH_FILTER_TEMPLATED_IN_LIST_NG,
  },
  {
    name: "resource_search POST search filter=templated in-list [fetch]",
    source: "138,742-751",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?filter=server_group%3D'autoscaling'%20and%20display_name%20in%20%5B%22vm1%22%2C%20%22vm%203%22%5D",
    status: 200,
    json: RESOURCE_SEARCH_POST_SEARCH_FILTER_TEMPLATED_IN_LIST_NG,
  },
  {
    name: "resource_search POST search JSON body [ng]",
    source: "640-643",
    method: "POST",
    path: "/v1/search/resource/grafana_instance",
    body: "{\"=\":{\"server_group\":\"autoscaling\"}}",
    status: 200,
    json: RESOURCE_SEARCH_POST_SEARCH_FILTER_QS_NG,
  },
  {
    name: "resource_search POST search JSON body [fetch]",
    source: "640-643",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?filter=null",
    body: "{\"=\":{\"server_group\":\"autoscaling\"}}",
    status: 200,
    json: RESOURCE_SEARCH_POST_SEARCH_FILTER_QS_NG,
  },
  {
    name: "resource_search POST search bad filter [ng]",
    source: "645-647",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?filter=server_group%3D",
    status: 400,
    html: PAGE_RESOURCE_SEARCH_POST_SEARCH_BAD_FILTER_NG,
    description: "Invalid filter: Expected '∨' term, found end of text  (at char 13), (line:1, col:14)",
  },
  {
    name: "resource_search POST search bad filter [fetch]",
    source: "645-647",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?filter=server_group%3D",
    status: 400,
    html: PAGE_RESOURCE_SEARCH_POST_SEARCH_BAD_FILTER_NG,
    description: "Invalid filter: Expected '∨' term, found end of text  (at char 13), (line:1, col:14)",
  },
  {
    name: "resource_search POST search generic type [ng]",
    source: "641",
    method: "POST",
    path: "/v1/search/resource/generic?filter=project_id%3D'a1b2c3d4-0000-4000-8000-000000000002'+and+id%3D'5898ba55-bbea-460f-985c-3d1243348304'",
    status: 200,
    json: RESOURCE_SEARCH_POST_SEARCH_GENERIC_TYPE_NG,
  },
  {
    name: "resource_search POST search generic type [fetch]",
    source: "641",
    method: "POST",
    path: "/v1/search/resource/generic?filter=project_id%3D'a1b2c3d4-0000-4000-8000-000000000002'%20and%20id%3D'5898ba55-bbea-460f-985c-3d1243348304'",
    status: 200,
    json: RESOURCE_SEARCH_POST_SEARCH_GENERIC_TYPE_NG,
  },
  {
    name: "resource_search measures [ng]",
    source: "217-220",
    method: "GET",
    path: "/v1/metric/<metric r2/cpu_time>/measures?aggregation=min&end=2024-01-01T00:09:00.000Z&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    status: 200,
    json: RESOURCE_SEARCH_MEASURES_NG,
  },
  {
    name: "resource_search measures [fetch]",
    source: "217-220",
    method: "GET",
    path: "/v1/metric/<metric r2/cpu_time>/measures?aggregation=min&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=null&fill=null&details=null&groupby=null&metric=null",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "resource_search measures [fetch granularity=60]",
    source: "217-220",
    method: "GET",
    path: "/v1/metric/<metric r2/cpu_time>/measures?aggregation=min&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=null&fill=null&details=null&groupby=null&metric=null",
    status: 200,
    json: RESOURCE_SEARCH_MEASURES_FETCH_GRANULARITY_60,
  },
  {
    name: "resource_aggregation GET v1/aggregation/metric reaggregation none fill=0 overlap=0 [ng]",
    source: "224-229",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=mean&end=2024-01-01T00:09:00.000Z&fill=0&metric=<metric r1/cpu_util>&metric=<metric r2/cpu_util>&metric=<metric r3/cpu_util>&needed_overlap=0&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    status: 200,
    json: RESOURCE_AGGREGATION_GET_V1_AGGREGATION_METRIC_REAGGREGATION,
  },
  {
    name: "resource_aggregation GET v1/aggregation/metric reaggregation none fill=0 overlap=0 [fetch]",
    source: "224-229",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=mean&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=0&fill=0&details=null&groupby=null&metric=<metric r1/cpu_util>&metric=<metric r2/cpu_util>&metric=<metric r3/cpu_util>",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "resource_aggregation GET v1/aggregation/metric reaggregation none fill=0 overlap=0 [fetch granularity=60]",
    source: "224-229",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=mean&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=0&fill=0&details=null&groupby=null&metric=<metric r1/cpu_util>&metric=<metric r2/cpu_util>&metric=<metric r3/cpu_util>",
    status: 400,
    referenceNeverAnswers: true,
    html: PAGE_RESOURCE_AGGREGATION_GET_V1_AGGREGATION_METRIC_REAGGREG,
  },
  {
    name: "resource_aggregation GET v1/aggregation/metric reaggregation=max fill=0 [ng]",
    source: "224-229",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=mean&end=2024-01-01T00:09:00.000Z&fill=0&metric=<metric r1/cpu_util>&metric=<metric r2/cpu_util>&metric=<metric r3/cpu_util>&needed_overlap=0&reaggregation=max&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    status: 200,
    json: RESOURCE_AGGREGATION_GET_V1_AGGREGATION_METRIC_REAGGREGATION_2,
  },
  {
    name: "resource_aggregation GET v1/aggregation/metric reaggregation=max fill=0 [fetch]",
    source: "224-229",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=mean&reaggregation=max&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=0&fill=0&details=null&groupby=null&metric=<metric r1/cpu_util>&metric=<metric r2/cpu_util>&metric=<metric r3/cpu_util>",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "resource_aggregation GET v1/aggregation/metric reaggregation=max fill=0 [fetch granularity=60]",
    source: "224-229",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=mean&reaggregation=max&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=0&fill=0&details=null&groupby=null&metric=<metric r1/cpu_util>&metric=<metric r2/cpu_util>&metric=<metric r3/cpu_util>",
    status: 200,
    json: RESOURCE_AGGREGATION_GET_V1_AGGREGATION_METRIC_REAGGREGATION_3,
  },
  {
    name: "resource_aggregation GET v1/aggregation/metric reaggregation none fill undefined [ng]",
    source: "224-229",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=mean&end=2024-01-01T00:09:00.000Z&metric=<metric r1/cpu_util>&metric=<metric r2/cpu_util>&metric=<metric r3/cpu_util>&needed_overlap=0&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    status: 200,
    json: RESOURCE_AGGREGATION_GET_V1_AGGREGATION_METRIC_REAGGREGATION,
  },
  {
    name: "resource_aggregation GET v1/aggregation/metric reaggregation none fill undefined [fetch]",
    source: "224-229",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=mean&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=0&details=null&groupby=null&metric=<metric r1/cpu_util>&metric=<metric r2/cpu_util>&metric=<metric r3/cpu_util>",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "resource_aggregation GET v1/aggregation/metric reaggregation none fill undefined [fetch granularity=60]",
    source: "224-229",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=mean&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=0&details=null&groupby=null&metric=<metric r1/cpu_util>&metric=<metric r2/cpu_util>&metric=<metric r3/cpu_util>",
    status: 400,
    referenceNeverAnswers: true,
    html: PAGE_RESOURCE_AGGREGATION_GET_V1_AGGREGATION_METRIC_REAGGREG,
  },
  {
    name: "resource_aggregation GET v1/aggregation/metric fill=null [ng]",
    source: "224-229",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=mean&end=2024-01-01T00:09:00.000Z&fill=null&metric=<metric r1/cpu_util>&metric=<metric r2/cpu_util>&metric=<metric r3/cpu_util>&needed_overlap=0&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    status: 200,
    json: RESOURCE_AGGREGATION_GET_V1_AGGREGATION_METRIC_REAGGREGATION,
  },
  {
    name: "resource_aggregation GET v1/aggregation/metric fill=null [fetch]",
    source: "224-229",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=mean&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=0&fill=null&details=null&groupby=null&metric=<metric r1/cpu_util>&metric=<metric r2/cpu_util>&metric=<metric r3/cpu_util>",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "resource_aggregation GET v1/aggregation/metric fill=null [fetch granularity=60]",
    source: "224-229",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=mean&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=0&fill=null&details=null&groupby=null&metric=<metric r1/cpu_util>&metric=<metric r2/cpu_util>&metric=<metric r3/cpu_util>",
    status: 400,
    referenceNeverAnswers: true,
    html: PAGE_RESOURCE_AGGREGATION_GET_V1_AGGREGATION_METRIC_REAGGREG,
  },
  {
    name: "resource_aggregation GET v1/aggregation/metric fill=dropna [ng]",
    source: "224-229",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=mean&end=2024-01-01T00:09:00.000Z&fill=dropna&metric=<metric r1/cpu_util>&metric=<metric r2/cpu_util>&metric=<metric r3/cpu_util>&needed_overlap=0&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    status: 200,
    json: RESOURCE_AGGREGATION_GET_V1_AGGREGATION_METRIC_REAGGREGATION,
  },
  {
    name: "resource_aggregation GET v1/aggregation/metric fill=dropna [fetch]",
    source: "224-229",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=mean&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=0&fill=dropna&details=null&groupby=null&metric=<metric r1/cpu_util>&metric=<metric r2/cpu_util>&metric=<metric r3/cpu_util>",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "resource_aggregation GET v1/aggregation/metric fill=dropna [fetch granularity=60]",
    source: "224-229",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=mean&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=0&fill=dropna&details=null&groupby=null&metric=<metric r1/cpu_util>&metric=<metric r2/cpu_util>&metric=<metric r3/cpu_util>",
    status: 400,
    referenceNeverAnswers: true,
    html: PAGE_RESOURCE_AGGREGATION_GET_V1_AGGREGATION_METRIC_REAGGREG,
  },
  {
    name: "resource_aggregation GET v1/aggregation/metric needed_overlap=100 [ng]",
    source: "224-229",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=mean&end=2024-01-01T00:09:00.000Z&metric=<metric r1/cpu_util>&metric=<metric r2/cpu_util>&metric=<metric r3/cpu_util>&needed_overlap=100&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    status: 200,
    json: RESOURCE_AGGREGATION_GET_V1_AGGREGATION_METRIC_REAGGREGATION,
  },
  {
    name: "resource_aggregation GET v1/aggregation/metric needed_overlap=100 [fetch]",
    source: "224-229",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=mean&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=100&details=null&groupby=null&metric=<metric r1/cpu_util>&metric=<metric r2/cpu_util>&metric=<metric r3/cpu_util>",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "resource_aggregation GET v1/aggregation/metric needed_overlap=100 [fetch granularity=60]",
    source: "224-229",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=mean&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=100&details=null&groupby=null&metric=<metric r1/cpu_util>&metric=<metric r2/cpu_util>&metric=<metric r3/cpu_util>",
    status: 400,
    referenceNeverAnswers: true,
    html: PAGE_RESOURCE_AGGREGATION_GET_V1_AGGREGATION_METRIC_REAGGREG,
  },
  {
    name: "resource_aggregation GET v1/aggregation/metric granularity=300 [ng]",
    source: "224-229",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=mean&end=2024-01-01T00:09:00.000Z&fill=0&granularity=300&metric=<metric r1/cpu_util>&metric=<metric r2/cpu_util>&metric=<metric r3/cpu_util>&needed_overlap=0&reaggregation=sum&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    status: 200,
    json: [["2024-01-01T00:00:00+00:00", 300, 36.900000000000006], ["2024-01-01T00:05:00+00:00", 300, 31.5]],
  },
  {
    name: "resource_aggregation GET v1/aggregation/metric granularity=300 [fetch]",
    source: "224-229",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=mean&reaggregation=sum&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=300&filter=null&needed_overlap=0&fill=0&details=null&groupby=null&metric=<metric r1/cpu_util>&metric=<metric r2/cpu_util>&metric=<metric r3/cpu_util>",
    status: 200,
    json: [["2024-01-01T00:00:00+00:00", 300, 36.900000000000006], ["2024-01-01T00:05:00+00:00", 300, 31.5]],
  },
  {
    name: "resource_aggregation one metric [ng]",
    source: "224-229",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=max&end=2024-01-01T00:09:00.000Z&fill=0&metric=<metric r1/cpu_util>&needed_overlap=0&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    status: 200,
    json: METRIC_MODE_MEASURES_AGGREGATION_MAX_NG,
  },
  {
    name: "resource_aggregation one metric [fetch]",
    source: "224-229",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=max&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=0&fill=0&details=null&groupby=null&metric=<metric r1/cpu_util>",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "resource_aggregation one metric [fetch granularity=60]",
    source: "224-229",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=max&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=0&fill=0&details=null&groupby=null&metric=<metric r1/cpu_util>",
    status: 200,
    json: METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH_GRANULARITY_60,
  },
  {
    name: "resource_aggregation no metric matched [ng]",
    source: "226",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=max&end=2024-01-01T00:09:00.000Z&fill=0&needed_overlap=0&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    status: 200,
    json: [],
  },
  {
    name: "resource_aggregation no metric matched [fetch]",
    source: "226",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=max&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=0&fill=0&details=null&groupby=null",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "resource_aggregation no metric matched [fetch granularity=60]",
    source: "226",
    method: "GET",
    path: "/v1/aggregation/metric?aggregation=max&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=0&fill=0&details=null&groupby=null",
    status: 200,
    json: [],
  },
  {
    name: "resource_aggregation groupby POST v1/aggregation/resource filter + groupby host [ng]",
    source: "191-196",
    method: "POST",
    path: "/v1/aggregation/resource/grafana_instance/metric/cpu_util?aggregation=mean&end=2024-01-01T00:09:00.000Z&fill=0&filter=server_group%3D'autoscaling'&groupby=host&needed_overlap=0&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    status: 200,
    json: RESOURCE_AGGREGATION_GROUPBY_POST_V1_AGGREGATION_RESOURCE_FI,
  },
  {
    name: "resource_aggregation groupby POST v1/aggregation/resource filter + groupby host [fetch]",
    source: "191-196",
    method: "POST",
    path: "/v1/aggregation/resource/grafana_instance/metric/cpu_util?aggregation=mean&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=server_group%3D'autoscaling'&needed_overlap=0&fill=0&details=null&groupby=host&metric=null",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "resource_aggregation groupby POST v1/aggregation/resource filter + groupby host [fetch granularity=60]",
    source: "191-196",
    method: "POST",
    path: "/v1/aggregation/resource/grafana_instance/metric/cpu_util?aggregation=mean&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=server_group%3D'autoscaling'&needed_overlap=0&fill=0&details=null&groupby=host&metric=null",
    status: 400,
    referenceNeverAnswers: true,
    html: PAGE_RESOURCE_AGGREGATION_GET_V1_AGGREGATION_METRIC_REAGGREG,
  },
  {
    name: "resource_aggregation groupby POST v1/aggregation/resource filter + groupby host,project_id reaggregation=max [ng]",
    source: "191-196",
    method: "POST",
    path: "/v1/aggregation/resource/grafana_instance/metric/cpu_util?aggregation=mean&end=2024-01-01T00:09:00.000Z&fill=0&filter=server_group%3D'autoscaling'&groupby=host&groupby=project_id&needed_overlap=0&reaggregation=max&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    status: 200,
    json: RESOURCE_AGGREGATION_GROUPBY_POST_V1_AGGREGATION_RESOURCE_FI_2,
  },
  {
    name: "resource_aggregation groupby POST v1/aggregation/resource filter + groupby host,project_id reaggregation=max [fetch]",
    source: "191-196",
    method: "POST",
    path: "/v1/aggregation/resource/grafana_instance/metric/cpu_util?aggregation=mean&reaggregation=max&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=server_group%3D'autoscaling'&needed_overlap=0&fill=0&details=null&groupby=host&groupby=project_id&metric=null",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "resource_aggregation groupby POST v1/aggregation/resource filter + groupby host,project_id reaggregation=max [fetch granularity=60]",
    source: "191-196",
    method: "POST",
    path: "/v1/aggregation/resource/grafana_instance/metric/cpu_util?aggregation=mean&reaggregation=max&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=server_group%3D'autoscaling'&needed_overlap=0&fill=0&details=null&groupby=host&groupby=project_id&metric=null",
    status: 200,
    json: RESOURCE_AGGREGATION_GROUPBY_POST_V1_AGGREGATION_RESOURCE_FI_3,
  },
  {
    name: "resource_aggregation groupby POST v1/aggregation/resource JSON body + groupby host [ng]",
    source: "191-196",
    method: "POST",
    path: "/v1/aggregation/resource/grafana_instance/metric/cpu_util?aggregation=mean&end=2024-01-01T00:09:00.000Z&fill=0&groupby=host&needed_overlap=0&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    body: "{\"=\":{\"server_group\":\"autoscaling\"}}",
    status: 200,
    json: RESOURCE_AGGREGATION_GROUPBY_POST_V1_AGGREGATION_RESOURCE_FI,
  },
  {
    name: "resource_aggregation groupby POST v1/aggregation/resource JSON body + groupby host [fetch]",
    source: "191-196",
    method: "POST",
    path: "/v1/aggregation/resource/grafana_instance/metric/cpu_util?aggregation=mean&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=0&fill=0&details=null&groupby=host&metric=null",
    body: "{\"=\":{\"server_group\":\"autoscaling\"}}",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "resource_aggregation groupby POST v1/aggregation/resource JSON body + groupby host [fetch granularity=60]",
    source: "191-196",
    method: "POST",
    path: "/v1/aggregation/resource/grafana_instance/metric/cpu_util?aggregation=mean&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=0&fill=0&details=null&groupby=host&metric=null",
    body: "{\"=\":{\"server_group\":\"autoscaling\"}}",
    status: 400,
    referenceNeverAnswers: true,
    html: PAGE_RESOURCE_AGGREGATION_GET_V1_AGGREGATION_METRIC_REAGGREG,
  },
  {
    name: "dynamic_aggregates metric ids one [ng]",
    source: "169-179",
    method: "POST",
    path: "/v1/aggregates?details=true&end=2024-01-01T00:09:00.000Z&fill=0&needed_overlap=0&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    body: "{\"operations\":\"(metric <metric r1/cpu_util> mean)\"}",
    status: 200,
    json: DYNAMIC_AGGREGATES_METRIC_IDS_ONE_NG,
  },
  {
    name: "dynamic_aggregates metric ids one [fetch]",
    source: "169-179",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=0&fill=0&details=true&groupby=null&metric=null",
    body: "{\"operations\":\"(metric <metric r1/cpu_util> mean)\"}",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "dynamic_aggregates metric ids one [fetch granularity=60]",
    source: "169-179",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=0&fill=0&details=true&groupby=null&metric=null",
    body: "{\"operations\":\"(metric <metric r1/cpu_util> mean)\"}",
    status: 200,
    json: DYNAMIC_AGGREGATES_METRIC_IDS_ONE_FETCH_GRANULARITY_60,
  },
  {
    name: "dynamic_aggregates metric ids aggregate [ng]",
    source: "169-179",
    method: "POST",
    path: "/v1/aggregates?details=true&end=2024-01-01T00:09:00.000Z&fill=0&needed_overlap=0&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    body: "{\"operations\":\"(aggregate mean (metric (<metric r1/cpu_util> mean) (<metric r2/cpu_util> mean)))\"}",
    status: 200,
    json: DYNAMIC_AGGREGATES_METRIC_IDS_AGGREGATE_NG,
  },
  {
    name: "dynamic_aggregates metric ids aggregate [fetch]",
    source: "169-179",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=0&fill=0&details=true&groupby=null&metric=null",
    body: "{\"operations\":\"(aggregate mean (metric (<metric r1/cpu_util> mean) (<metric r2/cpu_util> mean)))\"}",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "dynamic_aggregates metric ids aggregate [fetch granularity=60]",
    source: "169-179",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=0&fill=0&details=true&groupby=null&metric=null",
    body: "{\"operations\":\"(aggregate mean (metric (<metric r1/cpu_util> mean) (<metric r2/cpu_util> mean)))\"}",
    status: 200,
    json: DYNAMIC_AGGREGATES_METRIC_IDS_AGGREGATE_FETCH_GRANULARITY_60,
  },
  {
    name: "dynamic_aggregates metric ids two [ng]",
    source: "169-179",
    method: "POST",
    path: "/v1/aggregates?details=true&end=2024-01-01T00:09:00.000Z&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    body: "{\"operations\":\"(metric (<metric r1/cpu_util> mean) (<metric lone> max))\"}",
    status: 200,
    json: DYNAMIC_AGGREGATES_METRIC_IDS_TWO_NG,
  },
  {
    name: "dynamic_aggregates metric ids two [fetch]",
    source: "169-179",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&details=true&groupby=null&metric=null",
    body: "{\"operations\":\"(metric (<metric r1/cpu_util> mean) (<metric lone> max))\"}",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "dynamic_aggregates metric ids two [fetch granularity=60]",
    source: "169-179",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&details=true&groupby=null&metric=null",
    body: "{\"operations\":\"(metric (<metric r1/cpu_util> mean) (<metric lone> max))\"}",
    status: 200,
    json: DYNAMIC_AGGREGATES_METRIC_IDS_TWO_FETCH_GRANULARITY_60,
  },
  {
    name: "dynamic_aggregates metric ids fill=102 granularity=60 [ng]",
    source: "159-179",
    method: "POST",
    path: "/v1/aggregates?details=true&end=2024-01-01T00:09:00.000Z&fill=102&granularity=60&needed_overlap=0&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    body: "{\"operations\":\"(metric (<metric r1/cpu_util> mean) (<metric lone> max))\"}",
    status: 200,
    json: DYNAMIC_AGGREGATES_METRIC_IDS_TWO_FETCH_GRANULARITY_60,
  },
  {
    name: "dynamic_aggregates metric ids fill=102 granularity=60 [fetch]",
    source: "159-179",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=0&fill=102&details=true&groupby=null&metric=null",
    body: "{\"operations\":\"(metric (<metric r1/cpu_util> mean) (<metric lone> max))\"}",
    status: 200,
    json: DYNAMIC_AGGREGATES_METRIC_IDS_TWO_FETCH_GRANULARITY_60,
  },
  {
    name: "dynamic_aggregates search qs [ng]",
    source: "180-183",
    method: "POST",
    path: "/v1/aggregates?details=true&end=2024-01-01T00:09:00.000Z&fill=0&needed_overlap=0&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    body: "{\"operations\":\"(metric cpu_util mean)\",\"search\":\"server_group='autoscaling'\",\"resource_type\":\"grafana_instance\"}",
    status: 200,
    json: DYNAMIC_AGGREGATES_SEARCH_QS_NG,
  },
  {
    name: "dynamic_aggregates search qs [fetch]",
    source: "180-183",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=0&fill=0&details=true&groupby=null&metric=null",
    body: "{\"operations\":\"(metric cpu_util mean)\",\"search\":\"server_group='autoscaling'\",\"resource_type\":\"grafana_instance\"}",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "dynamic_aggregates search qs [fetch granularity=60]",
    source: "180-183",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=0&fill=0&details=true&groupby=null&metric=null",
    body: "{\"operations\":\"(metric cpu_util mean)\",\"search\":\"server_group='autoscaling'\",\"resource_type\":\"grafana_instance\"}",
    status: 400,
    html: PAGE_DYNAMIC_AGGREGATES_SEARCH_QS_FETCH_GRANULARITY_60,
    description: "Invalid pagination: `Sort key supplied is invalid: null'",
  },
  {
    name: "dynamic_aggregates search qs aggregated [ng]",
    source: "180-183",
    method: "POST",
    path: "/v1/aggregates?details=true&end=2024-01-01T00:09:00.000Z&fill=0&needed_overlap=0&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    body: "{\"operations\":\"(* 2 (aggregate sum (metric cpu_util mean)))\",\"search\":\"server_group='autoscaling'\",\"resource_type\":\"grafana_instance\"}",
    status: 200,
    json: DYNAMIC_AGGREGATES_SEARCH_QS_AGGREGATED_NG,
  },
  {
    name: "dynamic_aggregates search qs aggregated [fetch]",
    source: "180-183",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=0&fill=0&details=true&groupby=null&metric=null",
    body: "{\"operations\":\"(* 2 (aggregate sum (metric cpu_util mean)))\",\"search\":\"server_group='autoscaling'\",\"resource_type\":\"grafana_instance\"}",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "dynamic_aggregates search qs aggregated [fetch granularity=60]",
    source: "180-183",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=0&fill=0&details=true&groupby=null&metric=null",
    body: "{\"operations\":\"(* 2 (aggregate sum (metric cpu_util mean)))\",\"search\":\"server_group='autoscaling'\",\"resource_type\":\"grafana_instance\"}",
    status: 400,
    html: PAGE_DYNAMIC_AGGREGATES_SEARCH_QS_FETCH_GRANULARITY_60,
    description: "Invalid pagination: `Sort key supplied is invalid: null'",
  },
  {
    name: "dynamic_aggregates search qs two metrics [ng]",
    source: "180-183",
    method: "POST",
    path: "/v1/aggregates?details=true&end=2024-01-01T00:09:00.000Z&fill=0&needed_overlap=0&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    body: "{\"operations\":\"(metric (cpu_util mean) (cpu_time max))\",\"search\":\"server_group='autoscaling' and host='compute1'\",\"resource_type\":\"grafana_instance\"}",
    status: 200,
    json: DYNAMIC_AGGREGATES_SEARCH_QS_TWO_METRICS_NG,
  },
  {
    name: "dynamic_aggregates search qs two metrics [fetch]",
    source: "180-183",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=0&fill=0&details=true&groupby=null&metric=null",
    body: "{\"operations\":\"(metric (cpu_util mean) (cpu_time max))\",\"search\":\"server_group='autoscaling' and host='compute1'\",\"resource_type\":\"grafana_instance\"}",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "dynamic_aggregates search qs two metrics [fetch granularity=60]",
    source: "180-183",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=0&fill=0&details=true&groupby=null&metric=null",
    body: "{\"operations\":\"(metric (cpu_util mean) (cpu_time max))\",\"search\":\"server_group='autoscaling' and host='compute1'\",\"resource_type\":\"grafana_instance\"}",
    status: 400,
    html: PAGE_DYNAMIC_AGGREGATES_SEARCH_QS_FETCH_GRANULARITY_60,
    description: "Invalid pagination: `Sort key supplied is invalid: null'",
  },
  {
    name: "dynamic_aggregates search JSON string [ng]",
    source: "180-183",
    method: "POST",
    path: "/v1/aggregates?details=true&end=2024-01-01T00:09:00.000Z&fill=0&needed_overlap=0&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    body: "{\"operations\":\"(metric cpu_util mean)\",\"search\":\"{\\\"=\\\":{\\\"server_group\\\":\\\"autoscaling\\\"}}\",\"resource_type\":\"grafana_instance\"}",
    status: 400,
    html: PAGE_DYNAMIC_AGGREGATES_SEARCH_JSON_STRING_NG,
    description: "Invalid filter: Expected '∨' term, found '{'  (at char 0), (line:1, col:1)",
  },
  {
    name: "dynamic_aggregates search JSON string [fetch]",
    source: "180-183",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=0&fill=0&details=true&groupby=null&metric=null",
    body: "{\"operations\":\"(metric cpu_util mean)\",\"search\":\"{\\\"=\\\":{\\\"server_group\\\":\\\"autoscaling\\\"}}\",\"resource_type\":\"grafana_instance\"}",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "dynamic_aggregates search JSON string [fetch granularity=60]",
    source: "180-183",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=0&fill=0&details=true&groupby=null&metric=null",
    body: "{\"operations\":\"(metric cpu_util mean)\",\"search\":\"{\\\"=\\\":{\\\"server_group\\\":\\\"autoscaling\\\"}}\",\"resource_type\":\"grafana_instance\"}",
    status: 400,
    html: PAGE_DYNAMIC_AGGREGATES_SEARCH_JSON_STRING_NG,
    description: "Invalid filter: Expected '∨' term, found '{'  (at char 0), (line:1, col:1)",
  },
  {
    name: "dynamic_aggregates search generic [ng]",
    source: "180-183",
    method: "POST",
    path: "/v1/aggregates?details=true&end=2024-01-01T00:09:00.000Z&fill=0&needed_overlap=0&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    body: "{\"operations\":\"(metric cpu_util mean)\",\"search\":\"project_id='a1b2c3d4-0000-4000-8000-000000000002' and id='5898ba55-bbea-460f-985c-3d1243348304'\",\"resource_type\":\"generic\"}",
    status: 200,
    json: DYNAMIC_AGGREGATES_SEARCH_GENERIC_NG,
  },
  {
    name: "dynamic_aggregates search generic [fetch]",
    source: "180-183",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=0&fill=0&details=true&groupby=null&metric=null",
    body: "{\"operations\":\"(metric cpu_util mean)\",\"search\":\"project_id='a1b2c3d4-0000-4000-8000-000000000002' and id='5898ba55-bbea-460f-985c-3d1243348304'\",\"resource_type\":\"generic\"}",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "dynamic_aggregates search generic [fetch granularity=60]",
    source: "180-183",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=0&fill=0&details=true&groupby=null&metric=null",
    body: "{\"operations\":\"(metric cpu_util mean)\",\"search\":\"project_id='a1b2c3d4-0000-4000-8000-000000000002' and id='5898ba55-bbea-460f-985c-3d1243348304'\",\"resource_type\":\"generic\"}",
    status: 400,
    html: PAGE_DYNAMIC_AGGREGATES_SEARCH_QS_FETCH_GRANULARITY_60,
    description: "Invalid pagination: `Sort key supplied is invalid: null'",
  },
  {
    name: "dynamic_aggregates groupby host [ng]",
    source: "174-185,331-354",
    method: "POST",
    path: "/v1/aggregates?details=true&end=2024-01-01T00:09:00.000Z&fill=0&groupby=host&needed_overlap=0&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    body: "{\"operations\":\"(metric cpu_util mean)\",\"search\":\"server_group='autoscaling'\",\"resource_type\":\"grafana_instance\"}",
    status: 200,
    json: DYNAMIC_AGGREGATES_GROUPBY_HOST_NG,
  },
  {
    name: "dynamic_aggregates groupby host [fetch]",
    source: "174-185,331-354",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=0&fill=0&details=true&groupby=host&metric=null",
    body: "{\"operations\":\"(metric cpu_util mean)\",\"search\":\"server_group='autoscaling'\",\"resource_type\":\"grafana_instance\"}",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "dynamic_aggregates groupby host [fetch granularity=60]",
    source: "174-185,331-354",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=0&fill=0&details=true&groupby=host&metric=null",
    body: "{\"operations\":\"(metric cpu_util mean)\",\"search\":\"server_group='autoscaling'\",\"resource_type\":\"grafana_instance\"}",
    status: 200,
    json: DYNAMIC_AGGREGATES_GROUPBY_HOST_FETCH_GRANULARITY_60,
  },
  {
    name: "dynamic_aggregates groupby host,project_id aggregated [ng]",
    source: "174-185",
    method: "POST",
    path: "/v1/aggregates?details=true&end=2024-01-01T00:09:00.000Z&fill=0&groupby=host&groupby=project_id&needed_overlap=0&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    body: "{\"operations\":\"(aggregate mean (metric cpu_util mean))\",\"search\":\"server_group='autoscaling'\",\"resource_type\":\"grafana_instance\"}",
    status: 200,
    json: DYNAMIC_AGGREGATES_GROUPBY_HOST_PROJECT_ID_AGGREGATED_NG,
  },
  {
    name: "dynamic_aggregates groupby host,project_id aggregated [fetch]",
    source: "174-185",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=0&fill=0&details=true&groupby=host&groupby=project_id&metric=null",
    body: "{\"operations\":\"(aggregate mean (metric cpu_util mean))\",\"search\":\"server_group='autoscaling'\",\"resource_type\":\"grafana_instance\"}",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "dynamic_aggregates groupby host,project_id aggregated [fetch granularity=60]",
    source: "174-185",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=0&fill=0&details=true&groupby=host&groupby=project_id&metric=null",
    body: "{\"operations\":\"(aggregate mean (metric cpu_util mean))\",\"search\":\"server_group='autoscaling'\",\"resource_type\":\"grafana_instance\"}",
    status: 200,
    json: DYNAMIC_AGGREGATES_GROUPBY_HOST_PROJECT_ID_AGGREGATED_FETCH_,
  },
  {
    name: "dynamic_aggregates bad operations [ng]",
    source: "177-179",
    method: "POST",
    path: "/v1/aggregates?details=true&end=2024-01-01T00:09:00.000Z&fill=0&needed_overlap=0&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    body: "{\"operations\":\"(metric cpu_util\"}",
    status: 400,
    html: PAGE_DYNAMIC_AGGREGATES_BAD_OPERATIONS_NG,
    description: DESCRIPTION_DYNAMIC_AGGREGATES_BAD_OPERATIONS_NG,
  },
  {
    name: "dynamic_aggregates bad operations [fetch]",
    source: "177-179",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=0&fill=0&details=true&groupby=null&metric=null",
    body: "{\"operations\":\"(metric cpu_util\"}",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "dynamic_aggregates bad operations [fetch granularity=60]",
    source: "177-179",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=0&fill=0&details=true&groupby=null&metric=null",
    body: "{\"operations\":\"(metric cpu_util\"}",
    status: 400,
    html: PAGE_DYNAMIC_AGGREGATES_BAD_OPERATIONS_NG,
    description: DESCRIPTION_DYNAMIC_AGGREGATES_BAD_OPERATIONS_NG,
  },
  {
    name: "dynamic_aggregates unknown metric name [ng]",
    source: "180-183",
    method: "POST",
    path: "/v1/aggregates?details=true&end=2024-01-01T00:09:00.000Z&fill=0&needed_overlap=0&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    body: "{\"operations\":\"(metric nope mean)\",\"search\":\"server_group='autoscaling'\",\"resource_type\":\"grafana_instance\"}",
    status: 400,
    html: PAGE_DYNAMIC_AGGREGATES_UNKNOWN_METRIC_NAME_NG,
    description: {"cause": "Metrics not found", "detail": ["nope"]},
  },
  {
    name: "dynamic_aggregates unknown metric name [fetch]",
    source: "180-183",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=0&fill=0&details=true&groupby=null&metric=null",
    body: "{\"operations\":\"(metric nope mean)\",\"search\":\"server_group='autoscaling'\",\"resource_type\":\"grafana_instance\"}",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "dynamic_aggregates unknown metric name [fetch granularity=60]",
    source: "180-183",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=0&fill=0&details=true&groupby=null&metric=null",
    body: "{\"operations\":\"(metric nope mean)\",\"search\":\"server_group='autoscaling'\",\"resource_type\":\"grafana_instance\"}",
    status: 400,
    html: PAGE_DYNAMIC_AGGREGATES_SEARCH_QS_FETCH_GRANULARITY_60,
    description: "Invalid pagination: `Sort key supplied is invalid: null'",
  },
  {
    name: "dynamic_aggregates empty search string [ng]",
    source: "180",
    method: "POST",
    path: "/v1/aggregates?details=true&end=2024-01-01T00:09:00.000Z&fill=0&needed_overlap=0&start=2024-01-01T00:03:00.000Z&stop=2024-01-01T00:09:00.000Z",
    body: "{\"operations\":\"(metric <metric r1/cpu_util> mean)\"}",
    status: 200,
    json: DYNAMIC_AGGREGATES_METRIC_IDS_ONE_NG,
  },
  {
    name: "dynamic_aggregates empty search string [fetch]",
    source: "180",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=null&filter=null&needed_overlap=0&fill=0&details=true&groupby=null&metric=null",
    body: "{\"operations\":\"(metric <metric r1/cpu_util> mean)\"}",
    status: 400,
    html: PAGE_METRIC_MODE_MEASURES_AGGREGATION_MEAN_FETCH,
    description: {"cause": "Argument value error", "detail": "granularity", "reason": "Unable to parse timespan"},
  },
  {
    name: "dynamic_aggregates empty search string [fetch granularity=60]",
    source: "180",
    method: "POST",
    path: "/v1/aggregates?aggregation=null&reaggregation=null&start=2024-01-01T00%3A03%3A00.000Z&end=2024-01-01T00%3A09%3A00.000Z&stop=2024-01-01T00%3A09%3A00.000Z&granularity=60&filter=null&needed_overlap=0&fill=0&details=true&groupby=null&metric=null",
    body: "{\"operations\":\"(metric <metric r1/cpu_util> mean)\"}",
    status: 200,
    json: DYNAMIC_AGGREGATES_METRIC_IDS_ONE_FETCH_GRANULARITY_60,
  },
  {
    name: "templating resources() filter attrs=id,display_name [ng]",
    source: "520-579",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?attrs=display_name&attrs=id&filter=server_group%3D'autoscaling'",
    status: 200,
    json: TEMPLATING_RESOURCES_FILTER_ATTRS_ID_DISPLAY_NAME_NG,
  },
  {
    name: "templating resources() filter attrs=id,display_name [fetch]",
    source: "520-579",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?filter=server_group%3D'autoscaling'&attrs=display_name&attrs=id",
    status: 200,
    json: TEMPLATING_RESOURCES_FILTER_ATTRS_ID_DISPLAY_NAME_NG,
  },
  {
    name: "templating resources() legacy attrs=display_name [ng]",
    source: "528-579",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?attrs=display_name&filter=server_group%3D'autoscaling'",
    status: 200,
    json: [{"display_name": "vm1"}, {"display_name": "vm2"}, {"display_name": "vm 3"}],
  },
  {
    name: "templating resources() legacy attrs=display_name [fetch]",
    source: "528-579",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?filter=server_group%3D'autoscaling'&attrs=display_name",
    status: 200,
    json: [{"display_name": "vm1"}, {"display_name": "vm2"}, {"display_name": "vm 3"}],
  },
  {
    name: "templating resources() JSON attrs=host,id [ng]",
    source: "552-553",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?attrs=host&attrs=id",
    body: "{\"=\":{\"server_group\":\"autoscaling\"}}",
    status: 200,
    json: TEMPLATING_RESOURCES_JSON_ATTRS_HOST_ID_NG,
  },
  {
    name: "templating resources() JSON attrs=host,id [fetch]",
    source: "552-553",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?filter=null&attrs=host&attrs=id",
    body: "{\"=\":{\"server_group\":\"autoscaling\"}}",
    status: 200,
    json: TEMPLATING_RESOURCES_JSON_ATTRS_HOST_ID_NG,
  },
  {
    name: "templating resources() attrs=metrics [ng]",
    source: "559-566",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?attrs=id&attrs=metrics&filter=server_group%3D'autoscaling'",
    status: 200,
    json: TEMPLATING_RESOURCES_ATTRS_METRICS_NG,
  },
  {
    name: "templating resources() attrs=metrics [fetch]",
    source: "559-566",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?filter=server_group%3D'autoscaling'&attrs=id&attrs=metrics",
    status: 200,
    json: TEMPLATING_RESOURCES_ATTRS_METRICS_NG,
  },
  {
    name: "templating resources() before 4.2 (no attrs) [ng]",
    source: "580-581",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?filter=server_group%3D'autoscaling'",
    status: 200,
    json: RESOURCE_SEARCH_POST_SEARCH_FILTER_QS_NG,
  },
  {
    name: "templating resources() before 4.2 (no attrs) [fetch]",
    source: "580-581",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?filter=server_group%3D'autoscaling'&attrs=null",
    status: 200,
    json: [{}, {}, {}],
  },
  {
    name: "templating resources() attrs unknown [ng]",
    source: "578",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?attrs=nope&attrs=id&filter=server_group%3D'autoscaling'",
    status: 200,
    json: TEMPLATING_RESOURCES_ATTRS_UNKNOWN_NG,
  },
  {
    name: "templating resources() attrs unknown [fetch]",
    source: "578",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?filter=server_group%3D'autoscaling'&attrs=nope&attrs=id",
    status: 200,
    json: TEMPLATING_RESOURCES_ATTRS_UNKNOWN_NG,
  },
  {
    name: "templating metrics() GET v1/resource/generic/ID [ng]",
    source: "585-597",
    method: "GET",
    path: "/v1/resource/generic/1e8da77f-fa82-4e67-aba9-270c5ae8cbca",
    status: 200,
    json: TEMPLATING_METRICS_GET_V1_RESOURCE_GENERIC_ID_NG,
  },
  {
    name: "templating metrics() GET v1/resource/generic/ID [fetch]",
    source: "585-597",
    method: "GET",
    path: "/v1/resource/generic/1e8da77f-fa82-4e67-aba9-270c5ae8cbca?filter=null&attrs=null",
    status: 200,
    json: TEMPLATING_METRICS_GET_V1_RESOURCE_GENERIC_ID_NG,
  },
  {
    name: "templating metrics() unknown resource [ng]",
    source: "585-597",
    method: "GET",
    path: "/v1/resource/generic/00000000-0000-4000-8000-00000000dead",
    status: 404,
    html: PAGE_TEMPLATING_METRICS_UNKNOWN_RESOURCE_NG,
    description: "Resource 00000000-0000-4000-8000-00000000dead does not exist",
  },
  {
    name: "templating metrics() unknown resource [fetch]",
    source: "585-597",
    method: "GET",
    path: "/v1/resource/generic/00000000-0000-4000-8000-00000000dead?filter=null&attrs=null",
    status: 404,
    html: PAGE_TEMPLATING_METRICS_UNKNOWN_RESOURCE_NG,
    description: "Resource 00000000-0000-4000-8000-00000000dead does not exist",
  },
  {
    name: "completion attribute values POST search {} attrs=host [ng]",
    source: "414-421",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?attrs=host",
    body: "{}",
    status: 200,
    json: [{"host": "compute1"}, {"host": "compute1"}, {"host": "compute2"}],
  },
  {
    name: "completion attribute values POST search {} attrs=host [fetch]",
    source: "414-421",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?filter=null&attrs=host",
    body: "{}",
    status: 200,
    json: [{"host": "compute1"}, {"host": "compute1"}, {"host": "compute2"}],
  },
  {
    name: "completion resource GET v1/resource/generic/ID [ng]",
    source: "478",
    method: "GET",
    path: "/v1/resource/generic/1e8da77f-fa82-4e67-aba9-270c5ae8cbca",
    status: 200,
    json: TEMPLATING_METRICS_GET_V1_RESOURCE_GENERIC_ID_NG,
  },
  {
    name: "no credentials GET v1/resource",
    source: "848-864",
    method: "GET",
    path: "/v1/resource",
    auth: "none",
    status: 200,
    json: TESTDATASOURCE_GET_V1_RESOURCE_NG,
  },
  {
    name: "bad credentials GET v1/resource",
    source: "848-864",
    method: "GET",
    path: "/v1/resource",
    auth: "wrong",
    status: 200,
    json: TESTDATASOURCE_GET_V1_RESOURCE_NG,
  },
  {
    name: "unknown path",
    source: "865",
    method: "GET",
    path: "/v1/nope",
    status: 404,
    html: PAGE_UNKNOWN_PATH,
    description: null,
  },
  {
    name: "token mode GET v1/resource",
    source: "76,79-82,608",
    method: "GET",
    path: "/v1/resource",
    auth: "token",
    status: 200,
    json: TESTDATASOURCE_GET_V1_RESOURCE_NG,
  },
  {
    name: "token mode GET v1/resource_type",
    source: "76,79-82,659",
    method: "GET",
    path: "/v1/resource_type",
    auth: "token",
    status: 401,
    html: PAGE_TOKEN_MODE_GET_V1_RESOURCE_TYPE,
    description: "",
  },
  {
    name: "token mode POST search",
    source: "76,79-82,645",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?filter=server_group%3D'autoscaling'",
    auth: "token",
    status: 401,
    html: PAGE_TOKEN_MODE_GET_V1_RESOURCE_TYPE,
    description: "",
  },
  {
    name: "token mode GET metric",
    source: "76,79-82,249",
    method: "GET",
    path: "/v1/metric/<metric lone>",
    auth: "token",
    status: 401,
    html: PAGE_TOKEN_MODE_GET_V1_RESOURCE_TYPE,
    description: "",
  },
  {
    name: "noauth mode GET v1/resource",
    source: "76,79-82,608",
    method: "GET",
    path: "/v1/resource",
    auth: "noauth",
    status: 200,
    json: TESTDATASOURCE_GET_V1_RESOURCE_NG,
  },
  {
    name: "noauth mode GET v1/resource_type",
    source: "76,79-82,659",
    method: "GET",
    path: "/v1/resource_type",
    auth: "noauth",
    status: 401,
    html: PAGE_TOKEN_MODE_GET_V1_RESOURCE_TYPE,
    description: "",
  },
  {
    name: "noauth mode POST search",
    source: "76,79-82,645",
    method: "POST",
    path: "/v1/search/resource/grafana_instance?filter=server_group%3D'autoscaling'",
    auth: "noauth",
    status: 401,
    html: PAGE_TOKEN_MODE_GET_V1_RESOURCE_TYPE,
    description: "",
  },
  {
    name: "noauth mode GET metric",
    source: "76,79-82,249",
    method: "GET",
    path: "/v1/metric/<metric lone>",
    auth: "noauth",
    status: 401,
    html: PAGE_TOKEN_MODE_GET_V1_RESOURCE_TYPE,
    description: "",
  },
];

// The preflights: path, request headers, the CORS headers Gnocchi answered (none: refused)
const PREFLIGHTS: [string, string, Record<string, string>, Record<string, string>][] = [
  ["preflight OPTIONS / GET [authorization,content-type]", "/", {"origin": "http://foobar.com", "access-control-request-method": "GET", "access-control-request-headers": "authorization,content-type"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "GET", "access-control-allow-headers": "authorization,content-type", "access-control-max-age": "3600"}],
  ["preflight OPTIONS / GET [content-type,x-auth-token]", "/", {"origin": "http://foobar.com", "access-control-request-method": "GET", "access-control-request-headers": "content-type,x-auth-token"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "GET", "access-control-allow-headers": "content-type,x-auth-token", "access-control-max-age": "3600"}],
  ["preflight OPTIONS / GET [content-type,x-domain-id,x-project-id,x-roles,x-user-id]", "/", {"origin": "http://foobar.com", "access-control-request-method": "GET", "access-control-request-headers": "content-type,x-domain-id,x-project-id,x-roles,x-user-id"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "GET", "access-control-allow-headers": "content-type,x-domain-id,x-project-id,x-roles,x-user-id", "access-control-max-age": "3600"}],
  ["preflight OPTIONS / GET [Authorization, Content-Type]", "/", {"origin": "http://foobar.com", "access-control-request-method": "GET", "access-control-request-headers": "Authorization, Content-Type"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "GET", "access-control-allow-headers": "Authorization,Content-Type", "access-control-max-age": "3600"}],
  ["preflight OPTIONS /v1/resource GET [authorization,content-type]", "/v1/resource", {"origin": "http://foobar.com", "access-control-request-method": "GET", "access-control-request-headers": "authorization,content-type"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "GET", "access-control-allow-headers": "authorization,content-type", "access-control-max-age": "3600"}],
  ["preflight OPTIONS /v1/resource GET [content-type,x-auth-token]", "/v1/resource", {"origin": "http://foobar.com", "access-control-request-method": "GET", "access-control-request-headers": "content-type,x-auth-token"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "GET", "access-control-allow-headers": "content-type,x-auth-token", "access-control-max-age": "3600"}],
  ["preflight OPTIONS /v1/resource GET [content-type,x-domain-id,x-project-id,x-roles,x-user-id]", "/v1/resource", {"origin": "http://foobar.com", "access-control-request-method": "GET", "access-control-request-headers": "content-type,x-domain-id,x-project-id,x-roles,x-user-id"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "GET", "access-control-allow-headers": "content-type,x-domain-id,x-project-id,x-roles,x-user-id", "access-control-max-age": "3600"}],
  ["preflight OPTIONS /v1/resource GET [Authorization, Content-Type]", "/v1/resource", {"origin": "http://foobar.com", "access-control-request-method": "GET", "access-control-request-headers": "Authorization, Content-Type"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "GET", "access-control-allow-headers": "Authorization,Content-Type", "access-control-max-age": "3600"}],
  ["preflight OPTIONS /v1/metric/ID/measures?start=2024-01-01T00:03:00.000Z GET [authorization,content-type]", "/v1/metric/<metric lone>/measures?start=2024-01-01T00:03:00.000Z", {"origin": "http://foobar.com", "access-control-request-method": "GET", "access-control-request-headers": "authorization,content-type"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "GET", "access-control-allow-headers": "authorization,content-type", "access-control-max-age": "3600"}],
  ["preflight OPTIONS /v1/metric/ID/measures?start=2024-01-01T00:03:00.000Z GET [content-type,x-auth-token]", "/v1/metric/<metric lone>/measures?start=2024-01-01T00:03:00.000Z", {"origin": "http://foobar.com", "access-control-request-method": "GET", "access-control-request-headers": "content-type,x-auth-token"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "GET", "access-control-allow-headers": "content-type,x-auth-token", "access-control-max-age": "3600"}],
  ["preflight OPTIONS /v1/metric/ID/measures?start=2024-01-01T00:03:00.000Z GET [content-type,x-domain-id,x-project-id,x-roles,x-user-id]", "/v1/metric/<metric lone>/measures?start=2024-01-01T00:03:00.000Z", {"origin": "http://foobar.com", "access-control-request-method": "GET", "access-control-request-headers": "content-type,x-domain-id,x-project-id,x-roles,x-user-id"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "GET", "access-control-allow-headers": "content-type,x-domain-id,x-project-id,x-roles,x-user-id", "access-control-max-age": "3600"}],
  ["preflight OPTIONS /v1/metric/ID/measures?start=2024-01-01T00:03:00.000Z GET [Authorization, Content-Type]", "/v1/metric/<metric lone>/measures?start=2024-01-01T00:03:00.000Z", {"origin": "http://foobar.com", "access-control-request-method": "GET", "access-control-request-headers": "Authorization, Content-Type"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "GET", "access-control-allow-headers": "Authorization,Content-Type", "access-control-max-age": "3600"}],
  ["preflight OPTIONS /v1/search/resource/grafana_3f29dd28?filter=x POST [authorization,content-type]", "/v1/search/resource/grafana_instance?filter=x", {"origin": "http://foobar.com", "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "POST", "access-control-allow-headers": "authorization,content-type", "access-control-max-age": "3600"}],
  ["preflight OPTIONS /v1/search/resource/grafana_3f29dd28?filter=x POST [content-type,x-auth-token]", "/v1/search/resource/grafana_instance?filter=x", {"origin": "http://foobar.com", "access-control-request-method": "POST", "access-control-request-headers": "content-type,x-auth-token"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "POST", "access-control-allow-headers": "content-type,x-auth-token", "access-control-max-age": "3600"}],
  ["preflight OPTIONS /v1/search/resource/grafana_3f29dd28?filter=x POST [content-type,x-domain-id,x-project-id,x-roles,x-user-id]", "/v1/search/resource/grafana_instance?filter=x", {"origin": "http://foobar.com", "access-control-request-method": "POST", "access-control-request-headers": "content-type,x-domain-id,x-project-id,x-roles,x-user-id"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "POST", "access-control-allow-headers": "content-type,x-domain-id,x-project-id,x-roles,x-user-id", "access-control-max-age": "3600"}],
  ["preflight OPTIONS /v1/search/resource/grafana_3f29dd28?filter=x POST [Authorization, Content-Type]", "/v1/search/resource/grafana_instance?filter=x", {"origin": "http://foobar.com", "access-control-request-method": "POST", "access-control-request-headers": "Authorization, Content-Type"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "POST", "access-control-allow-headers": "Authorization,Content-Type", "access-control-max-age": "3600"}],
  ["preflight OPTIONS /v1/aggregates?details=true POST [authorization,content-type]", "/v1/aggregates?details=true", {"origin": "http://foobar.com", "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "POST", "access-control-allow-headers": "authorization,content-type", "access-control-max-age": "3600"}],
  ["preflight OPTIONS /v1/aggregates?details=true POST [content-type,x-auth-token]", "/v1/aggregates?details=true", {"origin": "http://foobar.com", "access-control-request-method": "POST", "access-control-request-headers": "content-type,x-auth-token"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "POST", "access-control-allow-headers": "content-type,x-auth-token", "access-control-max-age": "3600"}],
  ["preflight OPTIONS /v1/aggregates?details=true POST [content-type,x-domain-id,x-project-id,x-roles,x-user-id]", "/v1/aggregates?details=true", {"origin": "http://foobar.com", "access-control-request-method": "POST", "access-control-request-headers": "content-type,x-domain-id,x-project-id,x-roles,x-user-id"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "POST", "access-control-allow-headers": "content-type,x-domain-id,x-project-id,x-roles,x-user-id", "access-control-max-age": "3600"}],
  ["preflight OPTIONS /v1/aggregates?details=true POST [Authorization, Content-Type]", "/v1/aggregates?details=true", {"origin": "http://foobar.com", "access-control-request-method": "POST", "access-control-request-headers": "Authorization, Content-Type"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "POST", "access-control-allow-headers": "Authorization,Content-Type", "access-control-max-age": "3600"}],
  ["preflight OPTIONS /v1/aggregation/metric GET [authorization,content-type]", "/v1/aggregation/metric", {"origin": "http://foobar.com", "access-control-request-method": "GET", "access-control-request-headers": "authorization,content-type"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "GET", "access-control-allow-headers": "authorization,content-type", "access-control-max-age": "3600"}],
  ["preflight OPTIONS /v1/aggregation/metric GET [content-type,x-auth-token]", "/v1/aggregation/metric", {"origin": "http://foobar.com", "access-control-request-method": "GET", "access-control-request-headers": "content-type,x-auth-token"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "GET", "access-control-allow-headers": "content-type,x-auth-token", "access-control-max-age": "3600"}],
  ["preflight OPTIONS /v1/aggregation/metric GET [content-type,x-domain-id,x-project-id,x-roles,x-user-id]", "/v1/aggregation/metric", {"origin": "http://foobar.com", "access-control-request-method": "GET", "access-control-request-headers": "content-type,x-domain-id,x-project-id,x-roles,x-user-id"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "GET", "access-control-allow-headers": "content-type,x-domain-id,x-project-id,x-roles,x-user-id", "access-control-max-age": "3600"}],
  ["preflight OPTIONS /v1/aggregation/metric GET [Authorization, Content-Type]", "/v1/aggregation/metric", {"origin": "http://foobar.com", "access-control-request-method": "GET", "access-control-request-headers": "Authorization, Content-Type"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "GET", "access-control-allow-headers": "Authorization,Content-Type", "access-control-max-age": "3600"}],
  ["preflight OPTIONS /v1/resource GET []", "/v1/resource", {"origin": "http://foobar.com", "access-control-request-method": "GET"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "GET", "access-control-max-age": "3600"}],
  ["preflight OPTIONS /v1/resource GET [content-type,x-custom]", "/v1/resource", {"origin": "http://foobar.com", "access-control-request-method": "GET", "access-control-request-headers": "content-type,x-custom"}, {}],
  ["preflight OPTIONS /v1/resource OPTIONS [content-type]", "/v1/resource", {"origin": "http://foobar.com", "access-control-request-method": "OPTIONS", "access-control-request-headers": "content-type"}, {"access-control-allow-origin": "http://foobar.com", "access-control-allow-credentials": "true", "access-control-allow-methods": "OPTIONS", "access-control-allow-headers": "content-type", "access-control-max-age": "3600"}],
  ["preflight other origin", "/v1/resource", {"origin": "http://evil.com", "access-control-request-method": "GET", "access-control-request-headers": "authorization,content-type"}, {}],
];

describe('grafana-gnocchi-datasource 1.7.1: each request it sends is answered as Gnocchi 4.4 answers it', () => {
  it.each(SHAPES.map((s) => [`${s.name} (datasource.ts ${s.source}): ${s.method} → ${s.status}`, s] as const))('%s', async (_title, shape) => {
    const res = await send(shape);
    expect(res.statusCode).toBe(shape.status);
    // The browser reads the answer only with these (withCredentials: basicAuth).
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    const type = String(res.headers['content-type']).toLowerCase();
    if (shape.json !== undefined) {
      expect(type).toMatch(/^application\/json(; charset=utf-8)?$/);
      expect(asText(normaliseJson(JSON.parse(normaliseText(res.body))))).toBe(asText(shape.json));
      return;
    }
    // An error: WebOb's page for Grafana's Accept, the same description as JSON.
    expect(type).toBe('text/html; charset=utf-8');
    expect(normaliseText(res.body)).toBe(shape.html);
    if (shape.description !== undefined) {
      const asJson = await send(shape, 'application/json');
      expect(asJson.statusCode).toBe(shape.status);
      expect(asText(JSON.parse(normaliseText(asJson.body)).description)).toBe(asText(shape.description));
    }
  });

  it('covers every query mode, both serialisations and each auth mode of the datasource', () => {
    const names = SHAPES.map((s) => s.name).join('\n');
    for (const part of ['testDatasource', 'requireVersion', 'getResourceTypes', 'metric mode', 'resource mode', 'resource_search',
      'resource_aggregation GET', 'resource_aggregation groupby', 'dynamic_aggregates', 'templating resources()', 'templating metrics()',
      'completion', '[ng]', '[fetch]', '[fetch granularity=60]', 'token mode', 'noauth mode']) {
      expect(names).toContain(part);
    }
  });
});

describe('CORS preflights the browser sends before each request (direct access, withCredentials)', () => {
  it.each(PREFLIGHTS)('%s', async (_name, path, request, expected) => {
    const res = await t.app.inject({ method: 'OPTIONS', url: resolve(path), headers: request });
    expect(res.statusCode).toBe(200);
    const got: Record<string, string> = {};
    for (const k of ['access-control-allow-origin', 'access-control-allow-credentials', 'access-control-allow-methods',
      'access-control-allow-headers', 'access-control-max-age']) {
      const v = res.headers[k];
      if (v !== undefined) got[k] = String(v);
    }
    expect(got).toEqual(expected);
  });
});
