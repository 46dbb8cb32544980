import { describe, expect, it } from 'vitest';

import { acceptableOffers } from '../../formats/accept.js';

// Each row was answered by WebOb's `create_accept_header(h).acceptable_offers(offers)`
// (python3-webob, Debian bookworm) for the offer lists pecan and WebOb use
// when Gnocchi negotiates a handler's media type and an error page.
const PECAN = ['text/plain', 'text/html', 'application/json'];
const WEBOB = ['text/html', 'application/json'];
const HANDLER = ['application/json'];

describe('acceptableOffers, as WebOb reads Accept', () => {
  it.each<[string | undefined, string[], string[], string[]]>([
    [undefined, PECAN, WEBOB, HANDLER],
    ['', [], [], []],
    ['*/*', PECAN, WEBOB, HANDLER],
    ['text/plain', ['text/plain'], [], []],
    ['text/html', ['text/html'], ['text/html'], []],
    ['application/json', ['application/json'], ['application/json'], HANDLER],
    ['text/*', ['text/plain', 'text/html'], ['text/html'], []],
    ['application/*', ['application/json'], ['application/json'], HANDLER],
    ['text/plain, application/json;q=0.5', ['text/plain', 'application/json'], ['application/json'], HANDLER],
    ['application/xml', [], [], []],
    ['text/html;q=0.1, text/plain', ['text/plain', 'text/html'], ['text/html'], []],
    ['application/json;q=0, */*', ['text/plain', 'text/html'], ['text/html'], []],
    // Equal qualities keep the offers' order, not the more specific range first.
    ['application/json, */*', PECAN, WEBOB, HANDLER],
    ['text/plain;q=0.5, text/*;q=0.9', ['text/html', 'text/plain'], ['text/html'], []],
    ['*/*;q=0', [], [], []],
    ['application/json;q=0', [], [], []],
    ['garbage', PECAN, WEBOB, HANDLER],
    ['text/plain;q=2', PECAN, WEBOB, HANDLER],
    ['text/html, application/xhtml+xml, application/xml;q=0.9, */*;q=0.8', ['text/html', 'text/plain', 'application/json'], WEBOB, HANDLER],
    ['application/json; charset=utf-8', [], [], []],
    ['TEXT/HTML', ['text/html'], ['text/html'], []],
    ['text/plain; q=0.8, application/json; q=0.8', ['text/plain', 'application/json'], ['application/json'], HANDLER],
  ])('%j', (header, pecan, webob, handler) => {
    expect(acceptableOffers(header, PECAN)).toEqual(pecan);
    expect(acceptableOffers(header, WEBOB)).toEqual(webob);
    expect(acceptableOffers(header, HANDLER)).toEqual(handler);
  });
});
