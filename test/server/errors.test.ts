// Error answers under each Accept header, byte for byte as Gnocchi 4.4 gives
// them (observed on the reference server): pecan's JSON when JSON is the
// client's first choice, else WebOb's page as HTML, as WebOb's own JSON, or as
// plain text. A client accepting no JSON gets 406 from a handler, but objects
// Gnocchi's routing looks up first still answer 404.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startTestApp, type TestApp } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

const HTML = (statusLine: string, body: string) =>
  `<html>\n <head>\n  <title>${statusLine}</title>\n </head>\n <body>\n  <h1>${statusLine}</h1>\n  ${body}\n </body>\n</html>`;
const PLAIN = 'text/plain; charset=UTF-8';
const HTML_TYPE = 'text/html; charset=UTF-8';
const NOT_FOUND = 'The resource could not be found.';
const BAD_REQUEST = 'The server could not comply with the request since it is either malformed or otherwise incorrect.';

async function send(method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, headers: Record<string, string>, payload?: string) {
  const res = await t.app.inject({ method, url, headers: { ...ADMIN, ...headers }, ...(payload === undefined ? {} : { payload }) });
  return { status: res.statusCode, type: String(res.headers['content-type']).replace(/; charset=utf-8$/, ''), body: res.body };
}

describe('error answers follow the Accept header as in Gnocchi', () => {
  it.each<[string, 'GET' | 'PUT' | 'POST', string, Record<string, string>, number, string, string]>([
    ['no Accept: plain text', 'GET', '/v1/metric/nope', {}, 404, PLAIN, `404 Not Found\n\n${NOT_FOUND}\n\n Metric nope does not exist  `],
    ['*/*: HTML', 'GET', '/v1/metric/nope', { accept: '*/*' }, 404, HTML_TYPE,
      HTML('404 Not Found', `${NOT_FOUND}<br /><br />\nMetric nope does not exist\n\n`)],
    ['JSON first', 'GET', '/v1/metric/nope', { accept: 'application/json' }, 404, 'application/json',
      '{"code": 404, "title": "Not Found", "description": "Metric nope does not exist"}'],
    ['JSON second: WebOb\'s JSON page', 'GET', '/v1/metric/nope', { accept: 'text/plain, application/json;q=0.5' }, 404, 'application/json',
      `{"message": "${NOT_FOUND}<br /><br />\\nMetric nope does not exist\\n\\n", "code": "404 Not Found", "title": "Not Found"}`],
    ['text/plain on a metric the routing looks up: the 404', 'GET', '/v1/metric/nope', { accept: 'text/plain' }, 404, PLAIN,
      `404 Not Found\n\n${NOT_FOUND}\n\n Metric nope does not exist  `],
    ['text/plain on a handler: 406', 'GET', '/v1/metric?status=bogus', { accept: 'text/plain' }, 406, PLAIN,
      '406 Not Acceptable\n\nThe resource could not be generated that was acceptable to your browser (content of type text/plain. \n\n '],
    ['text/html on a handler: 406 in HTML', 'GET', '/v1/metric?status=bogus', { accept: 'text/html' }, 406, HTML_TYPE,
      HTML('406 Not Acceptable', 'The resource could not be generated that was acceptable to your browser\n(content of type text/html. <br /><br />\n')],
    ['a detail escaped in HTML', 'GET', '/v1/metric?status=bogus', { accept: '*/*' }, 400, HTML_TYPE,
      HTML('400 Bad Request', `${BAD_REQUEST}<br /><br />\nInvalid input: not a valid value for dictionary value @ data[&#x27;status&#x27;]\n\n`)],
    ['405 as plain text', 'PUT', '/v1/metric', {}, 405, PLAIN, '405 Method Not Allowed\n\nThe method PUT is not allowed for this resource. \n\n '],
    ['405 in HTML', 'PUT', '/v1/metric', { accept: '*/*' }, 405, HTML_TYPE,
      HTML('405 Method Not Allowed', 'The method PUT is not allowed for this resource. <br /><br />\n')],
    ['405 in JSON has an empty description', 'PUT', '/v1/metric', { accept: 'application/json' }, 405, 'application/json',
      '{"code": 405, "title": "Method Not Allowed", "description": ""}'],
    ['an unknown path under text/plain: 404', 'GET', '/v1/nonexistent', { accept: 'text/plain' }, 404, PLAIN, `404 Not Found\n\n${NOT_FOUND}\n\n   `],
    ['an unknown named metric under text/plain: 404', 'GET', '/v1/resource/generic/nope/metric/cpu', { accept: 'text/plain' }, 404, PLAIN,
      `404 Not Found\n\n${NOT_FOUND}\n\n Resource 95c84143-9ea9-504b-ae72-b5e5021e9665 does not exist  `],
    ['an unknown resource type under text/html: 404', 'POST', '/v1/search/resource/nope', { accept: 'text/html' }, 404, HTML_TYPE,
      HTML('404 Not Found', `${NOT_FOUND}<br /><br />\nResource type nope does not exist\n\n`)],
  ])('%s', async (_name, method, url, headers, status, type, body) => {
    const res = await send(method, url, headers);
    expect(res).toEqual({ status, type, body });
  });

  it('names the media type of a refused body (415)', async () => {
    const res = await send('POST', '/v1/archive_policy', { accept: '*/*', 'content-type': 'text/plain' }, '{}');
    expect(res).toEqual({
      status: 415,
      type: HTML_TYPE,
      body: HTML('415 Unsupported Media Type', 'The request media type text/plain is not supported by this server.\n<br /><br />\n'),
    });
  });

  it.each([['application/json'], ['text/plain'], ['text/html']])('deletes whatever the client accepts (%s)', async (accept) => {
    const created = await t.app.inject({
      method: 'POST', url: '/v1/archive_policy', headers: { ...ADMIN, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: `gone-${accept.replace('/', '-')}`, definition: [{ granularity: '1s', points: 2 }] }),
    });
    expect(created.statusCode).toBe(201);
    const res = await send('DELETE', `/v1/archive_policy/gone-${accept.replace('/', '-')}`, { accept });
    expect(res.status).toBe(204);
  });
});
