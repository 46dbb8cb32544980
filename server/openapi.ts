/**
 * The OpenAPI 3.1 document of the `/v1` API, generated from the schemas the
 * routes declare (server/openapi-schemas.ts holds the shared ones): served as
 * JSON at `GET /openapi.json`, browsable at `/openapi/`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { pyJson } from '../formats/json.js';
import { sharedSchemas } from './openapi-schemas.js';
import { packageRoot } from './package-root.js';

export const OPENAPI_JSON_URL = '/openapi.json';
export const OPENAPI_UI_PREFIX = '/openapi';

const TAGS = [
  { name: 'archive policies', description: 'Granularities, retention and aggregation methods of metrics' },
  { name: 'archive policy rules', description: 'Which policy a metric created by name gets' },
  { name: 'metrics', description: 'Metrics and their measures' },
  { name: 'resources', description: 'Resources, their history and named metrics' },
  { name: 'resource types', description: 'Resource types and their attributes' },
  { name: 'search', description: 'Resource and metric value searches' },
  { name: 'aggregates', description: 'Cross-metric computations, and the deprecated aggregation endpoints' },
  { name: 'ingestion', description: 'InfluxDB line protocol and Prometheus remote write' },
  { name: 'service', description: 'Version, capabilities and status' },
];

/** name and version of package.json. */
function packageInfo(): { title: string; version: string } {
  const pkg = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { name: string; version: string };
  return { title: pkg.name, version: pkg.version };
}

/** `/v1/metric/:id` as OpenAPI writes it. */
const openapiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}');

const methodsOf = (route: RouteOptions) => (Array.isArray(route.method) ? route.method : [route.method]);

/**
 * Sets the app up for route schemas and registers the document and its page.
 * Call before the routes are registered: the document lists the routes
 * registered after it.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  // The schemas document the routes and nothing more: each route checks its
  // input itself, with Gnocchi's exact messages (which clients and the
  // conformance suite match), from the raw body the catch-all content parser
  // keeps; Ajv would refuse or coerce input first, in other words. Answers go
  // through the app's reply serializer (pyJson, Python's separators) byte
  // for byte, which fast-json-stringify would not reproduce.
  app.setValidatorCompiler(() => () => true);
  app.setSerializerCompiler(() => (data) => pyJson(data));
  for (const schema of sharedSchemas()) app.addSchema(schema);

  // Fastify's body-per-media-type form has no way to say a body is optional
  // (searches take an empty body with a `filter` parameter): the routes say
  // `required: false` next to `content`, and the document is fixed after.
  const optionalBodies: [path: string, method: string][] = [];
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { ...packageInfo(), description: 'A Gnocchi-compatible time-series service: metrics, measures, resources and aggregates' },
      servers: [{ url: '/' }],
      tags: TAGS,
      components: {
        securitySchemes: {
          basic: { type: 'http', scheme: 'basic', description: 'Basic mode: the user name, password ignored (`admin` is an admin)' },
          keystone: { type: 'apiKey', in: 'header', name: 'X-Auth-Token', description: 'Keystone mode: a token of the identity service' },
        },
      },
      security: [{ basic: [] }, { keystone: [] }],
    },
    // 405 fillers, OPTIONS, HEAD and everything outside /v1 carry no tags.
    hideUntagged: true,
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    transform: ({ schema, url, route }) => {
      if (!url.startsWith('/v1')) return { schema: { ...schema, hide: true }, url };
      if ((schema?.body as { required?: boolean } | undefined)?.required === false) {
        for (const method of methodsOf(route)) optionalBodies.push([openapiPath(url), method.toLowerCase()]);
      }
      return { schema, url };
    },
    transformObject: (document) => {
      if (!('openapiObject' in document)) return document.swaggerObject;
      const { openapiObject } = document;
      const paths = (openapiObject as { paths: Record<string, Record<string, { requestBody?: { required: boolean } }>> }).paths;
      for (const [path, method] of optionalBodies) {
        const requestBody = paths[path]?.[method]?.requestBody;
        if (requestBody !== undefined) requestBody.required = false;
      }
      return openapiObject;
    },
  });

  app.get(OPENAPI_JSON_URL, async () => app.swagger());

  await app.register(async (page) => {
    // Browsers ask for HTML, scripts and styles, not JSON.
    page.addHook('onRoute', (route) => {
      route.config = { ...route.config, anyAccept: true };
    });
    await page.register(swaggerUi, { routePrefix: OPENAPI_UI_PREFIX });
  });
}
