// The web chat client (web/, built by Vite into web/dist) served at `/`, outside the API prefix. Served only
// when the build output exists: `npm run build` (part of `npm start`) makes it.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';

export interface WebDeps {
  /** The built client; default: web/dist of the repository this module lives in (from src/ or from dist/src/). */
  readonly root?: string;
}

/** The nearest directory at or above `from` that holds a package.json: the repository root. */
function repositoryRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return from;
  }
}

export const defaultWebRoot = (): string => join(repositoryRoot(dirname(fileURLToPath(import.meta.url))), 'web', 'dist');

// The page loads only its own hashed script and stylesheet; attachments are shown from blob: URLs, avatars may
// come from anywhere over https; the API and the socket are on this origin.
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data: https:",
  "media-src 'self' blob:",
  "connect-src 'self' ws: wss:",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

function setHeaders(reply: FastifyReply, path: string): void {
  reply.header('X-Content-Type-Options', 'nosniff');
  reply.header('Referrer-Policy', 'no-referrer');
  if (path.endsWith('.html') || /[/\\]sw\.js$/.test(path)) {
    // The page, and the service worker (browsers check it for updates; a stale one would linger a day).
    reply.header('Cache-Control', 'no-cache');
    if (path.endsWith('.html')) reply.header('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  } else if (/[/\\]assets[/\\]/.test(path)) {
    reply.header('Cache-Control', 'public, max-age=31536000, immutable'); // Vite puts a content hash in these names
  } else {
    reply.header('Cache-Control', 'public, max-age=3600');
  }
}

export const webRoutes: FastifyPluginAsync<WebDeps> = async (app, options) => {
  const root = resolve(options.root ?? defaultWebRoot());
  if (!existsSync(join(root, 'index.html'))) {
    // Said once the server listens: a start that fails says only why it failed, in one line.
    app.addHook('onListen', async () => {
      app.log.info({ root }, 'web client not built, so / serves nothing: run `npm run build` (or `npx vite build web`) to build it');
    });
    return;
  }
  await app.register(fastifyStatic, {
    root,
    prefix: '/',
    // One route per built file, found at startup: no catch-all route in front of the API and its 404s.
    wildcard: false,
    decorateReply: false,
    dotfiles: 'ignore',
    cacheControl: false,
    setHeaders,
  });
  app.log.debug({ root }, 'web client served at /');
};
