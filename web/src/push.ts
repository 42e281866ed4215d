// Web Push in the web client: an opt-in button (the browser's permission prompt only ever follows a click),
// the subscription saved with POST /push/subscriptions, removed on sign-out. The service worker is
// web/public/sw.js. See docs/notifications.md ("Web Push") and docs/api.md ("Push").
import type { ParleyClient } from '@parley/client';
import { h, toast } from './dom.js';

const SW_URL = '/sw.js';

export function pushSupported(): boolean {
  return 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window && window.isSecureContext;
}

async function currentSubscription(): Promise<PushSubscription | null> {
  const registration = await navigator.serviceWorker.getRegistration(SW_URL);
  return (await registration?.pushManager.getSubscription()) ?? null;
}

/** Asks for permission (call it from a click), subscribes this browser and saves the subscription for the user. */
export async function enablePush(chat: ParleyClient): Promise<void> {
  const permission = await Notification.requestPermission();
  if (permission !== 'granted') throw new Error('Notifications are blocked for this site in the browser settings.');
  const registration = await navigator.serviceWorker.register(SW_URL);
  await navigator.serviceWorker.ready;
  const config = await chat.request<{ data: { vapid_public_key: string } }>('GET', '/push/config');
  const key = Uint8Array.from(atob(config.data.vapid_public_key.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
  let subscription = await registration.pushManager.getSubscription();
  if (subscription) {
    // Made with another server key (the server's VAPID keys changed): subscribe anew.
    const current = subscription.options.applicationServerKey;
    if (current && new Uint8Array(current).join() !== key.join()) {
      await subscription.unsubscribe();
      subscription = null;
    }
  }
  subscription ??= await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
  const json = subscription.toJSON();
  await chat.request('POST', '/push/subscriptions', { body: { endpoint: json.endpoint, keys: json.keys } });
}

/** Removes this browser's subscription from the server and the browser (sign-out, or the button again). */
export async function disablePush(chat: ParleyClient): Promise<void> {
  if (!pushSupported()) return;
  const subscription = await currentSubscription();
  if (!subscription) return;
  await chat.request('DELETE', '/push/subscriptions', { body: { endpoint: subscription.endpoint } }).catch(() => {});
  await subscription.unsubscribe();
}

/** The opt-in button: "Enable notifications" / "Notifications on" (a click turns them off). Null when the browser cannot. */
export function pushButton(chat: ParleyClient): HTMLButtonElement | null {
  if (!pushSupported()) return null;
  const button = h('button', { type: 'button', id: 'push-toggle', className: 'link-button' }, 'Enable notifications');
  let on = false;
  let failure = '';
  const show = () => {
    // One short line in the sidebar: the reason of a failure is the tooltip, and said once as a notice.
    button.textContent = on ? 'Notifications on' : failure ? (Notification.permission === 'denied' ? 'Notifications blocked' : 'Notifications failed') : 'Enable notifications';
    button.title = failure;
    button.setAttribute('aria-pressed', String(on));
  };
  void currentSubscription().then((s) => {
    on = s !== null && Notification.permission === 'granted';
    show();
  });
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      if (on) await disablePush(chat);
      else await enablePush(chat);
      on = !on;
      failure = '';
    } catch (err) {
      failure = (err as Error).message;
      toast(failure);
    } finally {
      button.disabled = false;
      show();
    }
  });
  return button;
}

/** A click on a notification while the page is open: the service worker asks the page to open the conversation. */
export function listenForNotificationClicks(): () => void {
  if (!('serviceWorker' in navigator)) return () => {};
  const onMessage = (event: MessageEvent) => {
    const data = event.data as { type?: string; url?: string } | null;
    if (data?.type !== 'parley:open' || typeof data.url !== 'string') return;
    const hash = new URL(data.url, location.origin).hash;
    if (hash && location.hash !== hash) location.hash = hash;
  };
  navigator.serviceWorker.addEventListener('message', onMessage);
  return () => navigator.serviceWorker.removeEventListener('message', onMessage);
}
