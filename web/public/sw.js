// Parley's service worker: shows a Web Push notification (docs/notifications.md) and opens the conversation
// when it is clicked. Plain JavaScript, copied as is into web/dist by Vite (web/public), served at /sw.js.
/* eslint-env serviceworker */

self.addEventListener('push', (event) => {
  let data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch {
    data = { title: 'Parley', body: event.data ? event.data.text() : '' };
  }
  const title = typeof data.title === 'string' && data.title ? data.title : 'Parley';
  const url = typeof data.url === 'string' ? data.url : '/';
  event.waitUntil(
    self.registration.showNotification(title, {
      body: typeof data.body === 'string' ? data.body : '',
      // One notification per conversation: a newer message replaces the older one (and a repeated push shows once).
      tag: data.conversation_id ? `conversation-${data.conversation_id}` : 'parley',
      renotify: true,
      data: { url, conversation_id: data.conversation_id ?? null },
    }),
  );
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const target = new URL(event.notification.data?.url ?? '/', self.location.origin);
  if (target.origin !== self.location.origin) return; // only pages of this site
  event.waitUntil(
    (async () => {
      const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
      const open = windows.find((c) => new URL(c.url).origin === self.location.origin);
      if (open) {
        await open.focus();
        // The page switches to the conversation (web/src/push.ts listens); its sign-in stays as it is.
        open.postMessage({ type: 'parley:open', url: target.pathname + target.search + target.hash });
        return;
      }
      await self.clients.openWindow(target.href);
    })(),
  );
});
