/**
 * The shapes the `/v1` routes exchange, as JSON Schemas for the OpenAPI
 * document: named ones registered once with their `$id` (`sharedSchemas`)
 * and referenced with `ref()`, and the pieces route schemas are built from
 * (error answers, bodies, query parameters). They describe what the routes
 * answer and accept; nothing validates with them (see openapi.ts).
 */

export type JsonSchema = Record<string, unknown>;

const reference = (id: string): JsonSchema => ({ $ref: `${id}#` });

const str = (description?: string): JsonSchema => (description === undefined ? { type: 'string' } : { type: 'string', description });
const nullable = (type: string, description?: string): JsonSchema =>
  description === undefined ? { type: [type, 'null'] } : { type: [type, 'null'], description };
const uuid: JsonSchema = { type: 'string', format: 'uuid' };
/** Timestamps are written ISO 8601 with a `+00:00` offset. */
const timestamp: JsonSchema = { type: 'string', format: 'date-time' };
const object = (properties: Record<string, JsonSchema>, required: string[] = Object.keys(properties), extra: JsonSchema = {}): JsonSchema => ({
  type: 'object',
  properties,
  required,
  ...extra,
});

const GENERIC_ATTRIBUTES: Record<string, JsonSchema> = {
  creator: str(),
  started_at: timestamp,
  revision_start: timestamp,
  ended_at: { ...timestamp, type: ['string', 'null'] },
  user_id: nullable('string'),
  project_id: nullable('string'),
  original_resource_id: str('The id as the creator gave it'),
  id: uuid,
  type: str('The resource type'),
  revision_end: { ...timestamp, type: ['string', 'null'], description: 'Null for the current revision' },
  created_by_user_id: str(),
  created_by_project_id: str('Empty without a project'),
};

const ARCHIVE_POLICY_ITEM = object({
  timespan: nullable('string', 'A duration such as `1 day, 0:00:00`; null when unbounded'),
  granularity: str('A duration such as `0:05:00`'),
  points: nullable('integer'),
});

const SHARED = {
  Error: object(
    {
      code: { type: 'integer', description: 'The HTTP status' },
      title: str('The status text'),
      description: {
        type: ['string', 'object', 'null'],
        description: "Gnocchi's detail: a message, an object (`cause`, `reason`, `detail`...), empty or null",
      },
    },
    undefined,
    { description: 'An error, as answered to a client whose first choice is JSON' },
  ),
  ErrorPage: object(
    { message: str(), code: str('Status and text, e.g. `404 Not Found`'), title: str() },
    undefined,
    { description: "WebOb's JSON error page, for a client that accepts JSON but prefers plain text" },
  ),
  KeystoneRefusal: object(
    { error: object({ code: { type: 'integer' }, title: str(), message: str() }) },
    undefined,
    { description: 'A request without a valid token in keystone mode' },
  ),
  ArchivePolicy: object({
    name: str(),
    back_window: { type: 'integer', minimum: 0 },
    definition: { type: 'array', items: ARCHIVE_POLICY_ITEM },
    aggregation_methods: { type: 'array', items: str() },
  }),
  ArchivePolicyRule: object({
    name: str(),
    metric_pattern: str('`*` matches anything'),
    archive_policy_name: str(),
  }),
  CreatedMetric: object({
    id: uuid,
    creator: str(),
    name: nullable('string'),
    unit: nullable('string'),
    resource_id: { ...uuid, type: ['string', 'null'] },
    archive_policy_name: str(),
    created_by_user_id: str(),
    created_by_project_id: str(),
  }),
  Metric: object(
    {
      id: uuid,
      creator: str(),
      name: nullable('string'),
      unit: nullable('string'),
      resource_id: { ...uuid, type: ['string', 'null'] },
      archive_policy: reference('ArchivePolicy'),
      created_by_user_id: str(),
      created_by_project_id: str(),
    },
    undefined,
    { description: 'A metric as listed' },
  ),
  MetricWithResource: object(
    {
      id: uuid,
      creator: str(),
      name: nullable('string'),
      unit: nullable('string'),
      resource: { anyOf: [reference('GenericResource'), { type: 'null' }] },
      archive_policy: reference('ArchivePolicy'),
      created_by_user_id: str(),
      created_by_project_id: str(),
    },
    undefined,
    { description: 'A metric as read alone: its resource instead of its id' },
  ),
  ResourceAttributes: {
    type: 'object',
    description: "A resource's attributes, or those `attrs` names",
    properties: {
      ...GENERIC_ATTRIBUTES,
      metrics: { type: 'object', description: 'Metric name -> metric id', additionalProperties: uuid },
    },
    additionalProperties: { type: ['string', 'number', 'boolean', 'null'], description: 'An attribute of the resource type' },
  },
  Resource: {
    allOf: [reference('ResourceAttributes')],
    required: [...Object.keys(GENERIC_ATTRIBUTES), 'metrics'],
    description: 'A resource (a revision of it in histories): generic attributes, those of its type, its metrics',
  },
  GenericResource: {
    allOf: [reference('ResourceAttributes')],
    required: Object.keys(GENERIC_ATTRIBUTES),
    description: "A resource's generic attributes, without its metrics",
  },
  AttributeDefinition: {
    type: 'object',
    properties: {
      type: { enum: ['string', 'bool', 'datetime', 'uuid', 'number'] },
      required: { type: 'boolean' },
      min_length: { type: 'integer' },
      max_length: { type: 'integer' },
      min: nullable('number'),
      max: nullable('number'),
    },
    required: ['type', 'required'],
  },
  ResourceType: object({
    name: str(),
    attributes: { type: 'object', additionalProperties: reference('AttributeDefinition') },
    state: { enum: ['creating', 'active', 'creation_error', 'deleting', 'deletion_error'] },
  }),
  MeasurePoint: {
    type: 'array',
    description: '`[timestamp, granularity, value]`: granularity in seconds, or the calendar letter of a calendar resample',
    prefixItems: [timestamp, { type: ['number', 'string'] }, { type: 'number' }],
    minItems: 3,
    maxItems: 3,
  },
  Measures: { type: 'array', items: reference('MeasurePoint'), description: 'Aggregated points, by timestamp' },
  MeasureInput: {
    type: 'object',
    description: 'A measure to push; the first timestamp decides whether all are epoch numbers or date strings',
    properties: {
      timestamp: { type: ['string', 'number'], description: 'ISO 8601, epoch seconds, or relative (`-2 days`)' },
      value: { type: ['number', 'string', 'boolean'], description: "Read as Python's float()" },
    },
    required: ['timestamp', 'value'],
  },
  ResourceQuery: {
    type: 'object',
    description:
      'A resource filter in JSON form: `{"<op>": {"<attribute>": <value>}}` with op `=`, `!=`, `<`, `<=`, `>`, `>=`, `like`, `in`, ' +
      'or `{"and"|"or": [<filters>]}`, `{"not": <filter>}`',
    minProperties: 1,
    maxProperties: 1,
  },
  AggregatesResult: object(
    {
      measures: {
        anyOf: [
          object({ aggregated: reference('Measures') }, undefined, { additionalProperties: false, description: 'Operations that aggregate' }),
          {
            type: 'object',
            description: 'A bare `metric` operation by id: metric id -> aggregation -> points',
            additionalProperties: { type: 'object', additionalProperties: reference('Measures') },
          },
          {
            type: 'object',
            description: 'A bare `metric` operation through a resource search: resource id -> metric name -> aggregation -> points',
            additionalProperties: { type: 'object', additionalProperties: { type: 'object', additionalProperties: reference('Measures') } },
          },
        ],
      },
      references: {
        type: 'array',
        description: 'With `details`: the metrics, or the resources, referenced',
        items: { anyOf: [reference('Metric'), reference('Resource')] },
      },
    },
    ['measures'],
  ),
} satisfies Record<string, JsonSchema>;

export type SharedSchemaId = keyof typeof SHARED;

/** A reference to a shared schema by its `$id`. */
export const ref = (id: SharedSchemaId): JsonSchema => reference(id);

/** The named schemas, for `app.addSchema`. */
export const sharedSchemas = (): JsonSchema[] => Object.entries(SHARED).map(([$id, schema]) => ({ $id, ...schema }));

// --- answers -----------------------------------------------------------------

const ERROR_STATUSES = {
  400: 'Bad request: invalid body, parameter or state (message and detail as Gnocchi words them)',
  401: 'No or bad credentials',
  403: 'Denied by the access policy',
  404: 'An object named by the path or the body does not exist',
  406: 'The client accepts no JSON',
  409: 'Already exists',
  412: 'An `If-Match`/`If-None-Match`/`If-Unmodified-Since` precondition failed',
  413: 'The body is larger than the limit',
  415: 'Unsupported body media type',
  501: 'Not implemented',
  503: 'Too many measures waiting to be processed; `Retry-After` says when to retry',
  507: 'No room left to store the measures',
} as const;

type ErrorStatus = keyof typeof ERROR_STATUSES;

/** Errors are negotiated: JSON to clients that prefer it, else WebOb's HTML or text page. */
function errorResponse(status: ErrorStatus): JsonSchema {
  const json = status === 401 ? { anyOf: [ref('Error'), ref('ErrorPage'), ref('KeystoneRefusal')] } : { anyOf: [ref('Error'), ref('ErrorPage')] };
  return {
    description: ERROR_STATUSES[status],
    content: {
      'application/json': { schema: json },
      'text/html': { schema: str() },
      'text/plain': { schema: str() },
    },
    ...(status === 503 ? { headers: { 'Retry-After': { type: 'integer', description: 'Seconds' } } } : {}),
  };
}

export const errors = (...statuses: ErrorStatus[]): Record<number, JsonSchema> =>
  Object.fromEntries(statuses.map((s) => [s, errorResponse(s)]));

const HEADERS = {
  Location: { type: 'string', format: 'uri', description: 'Absolute URL of the new object' },
  Link: { type: 'string', description: '`<url>; rel="next"` when the page is full' },
  ETag: { type: 'string', description: 'Of the resource revision' },
  'Last-Modified': { type: 'string', description: "The revision's start, as an HTTP date" },
} satisfies Record<string, JsonSchema>;

/** A JSON answer, with some of the known headers. */
export function json(description: string, schema: JsonSchema, headers: (keyof typeof HEADERS)[] = []): JsonSchema {
  return {
    description,
    content: { 'application/json': { schema } },
    ...(headers.length === 0 ? {} : { headers: Object.fromEntries(headers.map((h) => [h, HEADERS[h]])) }),
  };
}

/** An answer without a body (202, 204, 304). */
export const empty = (description: string, headers: Record<string, JsonSchema> = {}): JsonSchema => ({
  description,
  type: 'null',
  ...(Object.keys(headers).length === 0 ? {} : { headers }),
});

export const listOf = (schema: JsonSchema): JsonSchema => ({ type: 'array', items: schema });

// --- requests ----------------------------------------------------------------

/** A body of one of these media types (anything else is a 415); `required: false` where it may be empty. */
export const body = (content: Record<string, JsonSchema>, required = true): JsonSchema => ({
  required,
  content: Object.fromEntries(Object.entries(content).map(([type, schema]) => [type, { schema }])),
});

export const jsonBody = (schema: JsonSchema, required = true): JsonSchema => body({ 'application/json': schema }, required);

export const MEASURES_BODY = jsonBody(listOf(ref('MeasureInput')));

/** Path parameters, all strings. */
export const params = (descriptions: Record<string, string>): JsonSchema =>
  object(Object.fromEntries(Object.entries(descriptions).map(([name, d]) => [name, str(d)])));

export const query = (properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema => ({ type: 'object', properties, required });

/** Query booleans are read as Gnocchi's strtobool (`true`, `yes`, `on`, `1`...). */
export const flag = (description: string): JsonSchema => ({ type: 'boolean', description });
export const repeated = (description: string): JsonSchema => ({ type: 'array', items: str(), description });

const TIME_RANGE = {
  start: str('Timestamp: ISO 8601, epoch seconds or relative to now'),
  stop: str('Timestamp: ISO 8601, epoch seconds or relative to now'),
};

export const PAGE_QUERY = {
  limit: { type: 'integer', minimum: 1, description: 'Page size, at most the configured max_limit' },
  marker: str('Where the page starts: the last id of the previous page'),
  sort: repeated('`key[:asc|desc]`, repeatable'),
};

export const MEASURES_QUERY = query({
  ...TIME_RANGE,
  aggregation: str('One of the policy’s methods; default mean'),
  granularity: str('Only this granularity (seconds or a timespan)'),
  resample: str('A granularity (needs `granularity`) or a calendar letter Y, H, Q, M, W'),
  refresh: flag('Process pending measures first'),
});

export const AGGREGATION_QUERY = {
  ...TIME_RANGE,
  granularity: str('Granularity to compute on (seconds or a timespan)'),
  fill: str('A float, `null`, `dropna`, `ffill`, `bfill`, `full_ffill` or `full_bfill`'),
  needed_overlap: { type: 'number', minimum: 0, maximum: 100, description: 'Percentage of common timestamps required; default 100' },
  resample: str('Resample to this granularity (needs `granularity`) or calendar letter'),
  refresh: flag('Process pending measures first'),
};

export const RESOURCE_LIST_QUERY = {
  details: flag('On `generic`: each resource with the attributes of its type'),
  history: flag('Every revision, not only the current one'),
  attrs: repeated('Only these attributes, repeatable'),
  ...PAGE_QUERY,
};

/** The filter of searches: a JSON body, or the STRING form in `filter` with an empty body. */
export const FILTER_BODY = jsonBody(ref('ResourceQuery'), false);
export const FILTER_QUERY = { filter: str('The filter in STRING form (`host = \'a\' and started_at > \'2024-01-01\'`), with an empty body') };

export const CONDITIONAL_HEADERS = query({
  'if-match': str(),
  'if-none-match': str(),
  'if-modified-since': str(),
  'if-unmodified-since': str(),
});
