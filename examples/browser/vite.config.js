// `npx vite examples/browser` (from the repository's root): this page at http://localhost:5173, with the API and
// the WebSocket forwarded to a running Parley (PARLEY_URL, default http://localhost:8080), so page, API and
// socket share one origin and no CORS setting is needed.
import { defineConfig } from 'vite';

const parley = process.env.PARLEY_URL ?? 'http://localhost:8080';

export default defineConfig({
  server: { proxy: { '/api/': parley, '/app/': { target: parley, ws: true } } },
});
