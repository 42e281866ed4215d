// Vite for the web client. `vite build web` (part of `npm run build`) writes web/dist, which Parley serves at /.
// `npx vite web` runs a dev server with hot reload that forwards the API and the WebSocket to a running Parley
// (PARLEY_URL, default http://localhost:8080), so the page and the API still share one origin.
import { defineConfig } from 'vite';

const parley = process.env.PARLEY_URL ?? 'http://localhost:8080';

export default defineConfig({
  server: {
    proxy: {
      '/api/': parley,
      '/app/': { target: parley, ws: true },
    },
  },
  // pusher-js's worker build: WebSocket only. Its browser build adds SockJS and JSONP fallbacks that would talk
  // to Pusher's own hosts, never to Parley (which serves the Pusher protocol over WebSocket alone): 1.8 KB
  // gzipped of the bundle for nothing. It runs on a page as in a worker (fetch, WebSocket).
  resolve: { alias: { 'pusher-js': 'pusher-js/dist/worker/pusher.worker.js' } },
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', modulePreload: { polyfill: false } },
});
