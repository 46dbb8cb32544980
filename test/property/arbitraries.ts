/**
 * fast-check arbitraries for the hostile-input properties: path segments,
 * query strings, headers and JSON-ish bodies meant to break parsers and
 * validators rather than to be valid.
 */
import fc from 'fast-check';
import { ADMIN, USER } from '../server/helpers.js';

/** Strings chosen to upset path, number, time and key handling. */
export const NASTY_STRINGS = [
  '',
  ' ',
  '..',
  '../..',
  '.',
  '%00',
  '%',
  '%zz',
  '%2e%2e',
  '%2F',
  '\u0000',
  '\n',
  '\r\n',
  '\t',
  'NaN',
  'nan',
  'Infinity',
  '-Infinity',
  'inf',
  '-inf',
  '1e400',
  '-1e400',
  '1e-400',
  '0',
  '-0',
  '-1',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'null',
  'true',
  'undefined',
  '[]',
  '{}',
  'now',
  'today',
  'NaT',
  '-2 days',
  '1:24',
  '9999-12-31T23:59:59',
  '0001-01-01',
  '1970-01-01T00:00:00',
  '2200-01-01T00:00:00+14:00',
  '*',
  '**',
  '?',
  '#',
  '&',
  '=',
  '\u202e',
  '\ufeff',
  '\ud800',
  '\udfff',
  '😀',
  'ß',
  'İ',
  '\u0301',
  'Ω'.repeat(300),
  'a'.repeat(2047),
  'a'.repeat(2048),
  'a'.repeat(2049),
  'x'.repeat(10_000),
  '9'.repeat(400),
  '12345678901234567890123',
  '0x10',
  '1_000',
  '+1',
  ' 1 ',
  'mean',
  'generic',
  'metric',
  'measures',
];

/** Any string, with a bias towards the nasty ones, odd Unicode and long ones. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...NASTY_STRINGS), weight: 4 },
  { arbitrary: fc.string({ maxLength: 40 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }), weight: 1 },
  {
    arbitrary: fc
      .tuple(fc.string({ unit: 'binary', minLength: 1, maxLength: 3 }), fc.integer({ min: 100, max: 20_000 }))
      .map(([s, n]) => s.repeat(Math.ceil(n / s.length)).slice(0, n)),
    weight: 1,
  },
);

/**
 * Percent-encodes every byte of the UTF-8 form that is not unreserved. Unlike
 * encodeURIComponent it does not throw on lone surrogates (they become
 * U+FFFD, as any UTF-8 encoder on the wire would send them).
 */
export function pctEncode(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : '%' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/**
 * One path segment as it goes on the wire: percent-encoded (the usual case),
 * or raw (so `..`, `%00`, `%zz` and stray slashes reach the router as such).
 * Raw segments are limited to what an HTTP request line can carry.
 */
export const segment = (known: readonly string[]): fc.Arbitrary<string> =>
  fc.oneof(
    { arbitrary: fc.constantFrom(...known).map(pctEncode), weight: 3 },
    { arbitrary: hostileString.map(pctEncode), weight: 4 },
    {
      arbitrary: fc.constantFrom('..', '.', '%00', '%', '%zz', '%2e%2e', '%2F', 'a/b', '%C0%AF', '%ED%A0%80', '%FF', '%u0041', ';', ''),
      weight: 2,
    },
  );

// Numbers as JSON tokens, including ones JSON.stringify cannot produce
// (bare NaN/Infinity as Python's json accepts, overflowing exponents).
const numberToken: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '0',
    '-0',
    '1',
    '-1',
    '1e308',
    '-1e308',
    '1e309',
    '1e400',
    '-1e400',
    '5e-324',
    '1e-400',
    '9007199254740993',
    '18446744073709551616',
    '123456789012345678901234567890',
    '1.7976931348623157e308',
    'NaN',
    'Infinity',
    '-Infinity',
    '1E+2',
    '0.1',
    '01',
    '.5',
  ),
  fc.double().map((d) => (Number.isFinite(d) ? JSON.stringify(d) : String(d))),
  fc.integer().map(String),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
);

/** A JSON document as text, so that `__proto__` keys, duplicate keys and bare NaN survive. */
export type JsonText = string;

const KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'name',
  'definition',
  'granularity',
  'points',
  'timespan',
  'back_window',
  'aggregation_methods',
  'id',
  'archive_policy_name',
  'archive_policy',
  'unit',
  'resource_id',
  'metrics',
  'metric',
  'user_id',
  'project_id',
  'started_at',
  'ended_at',
  'timestamp',
  'value',
  'operations',
  'search',
  'resource_type',
  'metric_pattern',
  'attributes',
  'type',
  'required',
  'max_length',
  'min_length',
  'min',
  'max',
  'options',
  'fill',
  'and',
  'or',
  'not',
  '=',
  '!=',
  'like',
  'in',
  '>=',
];

const key: fc.Arbitrary<string> = fc.oneof({ arbitrary: fc.constantFrom(...KEYS), weight: 3 }, { arbitrary: hostileString, weight: 1 });

const scalar: fc.Arbitrary<JsonText> = fc.oneof(
  { arbitrary: numberToken, weight: 3 },
  { arbitrary: hostileString.map((s) => JSON.stringify(s)), weight: 3 },
  { arbitrary: fc.constantFrom('true', 'false', 'null'), weight: 1 },
);

const object = (entries: fc.Arbitrary<[string, JsonText][]>): fc.Arbitrary<JsonText> =>
  entries.map((es) => '{' + es.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',') + '}');

/** Random JSON shapes (depth limited), with hostile keys and leaves. */
export const jsonText: fc.Arbitrary<JsonText> = fc.letrec<{ value: JsonText }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { arbitrary: scalar, weight: 3 },
    { arbitrary: fc.array(tie('value'), { maxLength: 5 }).map((xs) => `[${xs.join(',')}]`), weight: 1 },
    { arbitrary: object(fc.array(fc.tuple(key, tie('value')), { maxLength: 5 })), weight: 2 },
  ),
})).value;

/** A value nested `depth` levels deep in arrays and objects. */
export const deepJson: fc.Arbitrary<JsonText> = fc
  .tuple(fc.integer({ min: 20, max: 60 }), scalar, fc.array(fc.boolean(), { minLength: 60, maxLength: 60 }), key)
  .map(([depth, leaf, kinds, k]) => {
    let text = leaf;
    for (let i = 0; i < depth; i++) text = kinds[i] ? `[${text}]` : `{${JSON.stringify(k)}:${text}}`;
    return text;
  });

/** Bodies shaped like the real ones (measures, policies, resources, searches) with hostile leaves. */
export const shapedJson: fc.Arbitrary<JsonText> = fc.oneof(
  // measures
  fc
    .array(object(fc.tuple(jsonTextLeafPair('timestamp'), jsonTextLeafPair('value')).map((p) => p)), { maxLength: 6 })
    .map((xs) => `[${xs.join(',')}]`),
  // archive policy
  object(
    fc.tuple(
      jsonTextLeafPair('name'),
      fc
        .array(object(fc.tuple(jsonTextLeafPair('granularity'), jsonTextLeafPair('points'), jsonTextLeafPair('timespan'))), {
          maxLength: 3,
        })
        .map((xs): [string, JsonText] => ['definition', `[${xs.join(',')}]`]),
      jsonTextLeafPair('back_window'),
      fc
        .array(hostileString.map((s) => JSON.stringify(s)), { maxLength: 3 })
        .map((xs): [string, JsonText] => ['aggregation_methods', `[${xs.join(',')}]`]),
    ),
  ),
  // metric / resource
  object(fc.tuple(jsonTextLeafPair('id'), jsonTextLeafPair('archive_policy_name'), jsonTextLeafPair('unit'), jsonTextLeafPair('started_at'))),
  // aggregates / search
  object(
    fc.tuple(
      fc.oneof(jsonText, hostileString.map((s) => JSON.stringify(s))).map((v): [string, JsonText] => ['operations', v]),
      fc.oneof(jsonText, deepJson).map((v): [string, JsonText] => ['search', v]),
    ),
  ),
  // batch measures: {id: [measures]} and {rid: {name: {measures: [...]}}}
  object(fc.array(fc.tuple(hostileString, jsonText), { maxLength: 3 })),
);

function jsonTextLeafPair(name: string): fc.Arbitrary<[string, JsonText]> {
  return fc.oneof(scalar, jsonText).map((v): [string, JsonText] => [name, v]);
}

/** A request body as text, or none. */
export const body: fc.Arbitrary<string | undefined> = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 2 },
  { arbitrary: jsonText, weight: 4 },
  { arbitrary: shapedJson, weight: 4 },
  { arbitrary: deepJson, weight: 2 },
  // Not JSON at all: truncated, binary, or another format.
  {
    arbitrary: fc.oneof(
      jsonText.map((t) => t.slice(0, Math.max(0, t.length - 1))),
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc.constantFrom('{', '[', '"', '{"a":', 'cpu value=1 1', '\u0000\u0000', '\ufeff{}', 'null', '[1,]', '{"a":1,}'),
    ),
    weight: 1,
  },
);

export const QUERY_KEYS = [
  'refresh',
  'start',
  'stop',
  'granularity',
  'aggregation',
  'resample',
  'fill',
  'needed_overlap',
  'limit',
  'marker',
  'sort',
  'details',
  'history',
  'filter',
  'metric',
  'operations',
  'groupby',
  'archive_policy_name',
  'create_metrics',
  'reaggregation',
  'attrs',
  'transform',
  'db',
  'precision',
  'rp',
  'user_id',
  'project_id',
  'id',
  'name',
  'unit',
  'q',
];

/** A query string (with its leading `?`), sometimes with raw bad escapes. */
export const queryString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constant(''), weight: 1 },
  {
    arbitrary: fc
      .array(
        fc.tuple(
          fc.oneof({ arbitrary: fc.constantFrom(...QUERY_KEYS), weight: 4 }, { arbitrary: hostileString, weight: 1 }),
          fc.oneof(
            hostileString,
            fc.constantFrom('true', 'false', '60', '3600', '1e-6', '0.000001', '1e20', '-60', '1970-01-01', '2200-01-01', 'mean', 'count', 'std', '-mean', 'id:desc', 'bogus', 'CREATE DATABASE db1', 'create database "😀"', 'CREATE DATABASE'),
          ),
          fc.boolean(),
        ),
        { minLength: 1, maxLength: 6 },
      )
      .map(
        (pairs) =>
          '?' +
          pairs
            .map(([k, v, raw]) => (raw ? `${k}=${v}`.replace(/[^\x21-\x7e]/g, pctEncode) : `${pctEncode(k)}=${pctEncode(v)}`))
            .join('&'),
      ),
    weight: 4,
  },
  { arbitrary: fc.constantFrom('?', '?&&', '?=', '?a', '?%', '?%zz=1', '?refresh=true&refresh=false', '?limit=-1', '?limit=1e400'), weight: 1 },
);

const printableHeader = fc.string({ maxLength: 60 }).map((s) => s.replace(/[^\x20-\x7e]/g, ''));

export const headers: fc.Arbitrary<Record<string, string>> = fc
  .record(
    {
      'content-type': fc.oneof(
        { arbitrary: fc.constant('application/json'), weight: 8 },
        {
          arbitrary: fc.constantFrom(
            'application/json; charset=utf-8',
            'APPLICATION/JSON',
            'application/json;',
            'text/plain',
            'application/x-www-form-urlencoded',
            'multipart/form-data; boundary=x',
            'application/octet-stream',
            'application/x-protobuf',
            'text/csv',
            ';',
            '',
          ),
          weight: 2,
        },
        { arbitrary: printableHeader, weight: 1 },
      ),
      accept: fc.oneof(
        { arbitrary: fc.constantFrom('application/json', '*/*', 'application/json, text/plain'), weight: 8 },
        { arbitrary: fc.constantFrom('application/*', 'text/html', 'text/plain', 'application/json;q=0', ',', ''), weight: 1 },
        { arbitrary: printableHeader, weight: 1 },
      ),
      authorization: fc.oneof(
        { arbitrary: fc.constant(ADMIN.authorization!), weight: 6 },
        { arbitrary: fc.constant(USER.authorization!), weight: 2 },
        {
          arbitrary: fc.oneof(
            fc.constantFrom('basic', 'basic ', 'basic !!!', 'basic Og==', 'bearer x', 'Basic YWRtaW4='),
            hostileString.map((s) => 'basic ' + Buffer.from(`${s}:`).toString('base64')),
            printableHeader,
          ),
          weight: 2,
        },
      ),
      'if-match': printableHeader,
      'if-none-match': fc.oneof(fc.constant('*'), printableHeader),
      'if-modified-since': fc.oneof(fc.constantFrom('Thu, 01 Jan 1970 00:00:00 GMT', 'garbage'), printableHeader),
      origin: fc.constantFrom('http://example.com', 'null', ''),
    },
    { requiredKeys: ['content-type'] },
  );
