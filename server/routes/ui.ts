/**
 * The web console: static files of server/ui at `/ui/` and uPlot's two
 * files at `/ui/vendor/`. The page talks to the `/v1` API like any client,
 * so nothing here needs the caller.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { packageRoot } from '../package-root.js';

/** tsc copies no HTML, JS or CSS into dist/: the files are read from the source tree. */
const UI_DIR = join(packageRoot(), 'server', 'ui');
const UPLOT_DIR = dirname(createRequire(import.meta.url).resolve('uplot/dist/uPlot.esm.js'));
const VENDOR_FILES = new Set(['/uPlot.esm.js', '/uPlot.min.css']);

export async function uiRoutes(app: FastifyInstance): Promise<void> {
  // Browsers ask for HTML, scripts and styles, not JSON.
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, anyAccept: true };
  });

  await app.register(fastifyStatic, { root: UI_DIR, prefix: '/ui/' });
  await app.register(fastifyStatic, {
    root: UPLOT_DIR,
    prefix: '/ui/vendor/',
    decorateReply: false,
    allowedPath: (path) => VENDOR_FILES.has(path),
  });

  // The router ignores trailing slashes, so this route is also `/ui/`, which
  // the wildcard above never sees. The page's relative module paths need the
  // slash: the bare form is sent there.
  app.get('/ui', async (request, reply) =>
    request.url.split('?', 1)[0]!.endsWith('/') ? reply.sendFile('index.html') : reply.redirect('/ui/', 301),
  );
}
