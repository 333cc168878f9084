import { signal } from '@preact/signals';
import type { SavedQuery } from 'odbrest/client';

/**
 * Hash routing, so the studio works under any mount path and alias (the server knows only its files):
 * `#/classes`, `#/class/Customer`, `#/model`, `#/events`, `#/metrics`, ...; `?open=ID1,ID2` is the stack of object panels over either.
 */
export interface Route {
  screen: 'classes' | 'objects' | 'recycle' | 'account' | 'model' | 'events' | 'metrics';
  className?: string;
  /** The open object panels, bottom first. */
  stack: string[];
}

export function parseHash(hash: string): Route {
  const [path = '', search = ''] = hash.replace(/^#/, '').split('?');
  const open = new URLSearchParams(search).get('open');
  const stack = open ? open.split(',').filter(Boolean) : [];
  const match = /^\/class\/([^/]+)$/.exec(path);
  if (match) {
    try {
      return { screen: 'objects', className: decodeURIComponent(match[1]!), stack };
    } catch {
      return { screen: 'classes', stack };
    }
  }
  if (path === '/recycle') return { screen: 'recycle', stack };
  if (path === '/account') return { screen: 'account', stack };
  if (path === '/model') return { screen: 'model', stack };
  if (path === '/events') return { screen: 'events', stack };
  if (path === '/metrics') return { screen: 'metrics', stack };
  return { screen: 'classes', stack };
}

export function routeHash(route: Route): string {
  const path = route.screen === 'objects' && route.className ? `/class/${encodeURIComponent(route.className)}` : route.screen === 'classes' || route.screen === 'objects' ? '/classes' : `/${route.screen}`;
  return `#${path}${route.stack.length > 0 ? `?open=${route.stack.map(encodeURIComponent).join(',')}` : ''}`;
}

export const route = signal<Route>(parseHash(location.hash));
addEventListener('hashchange', () => (route.value = parseHash(location.hash)));

export function navigate(next: Route): void {
  const hash = routeHash(next);
  if (hash !== location.hash) location.hash = hash;
  route.value = next;
}

export const openClass = (className: string) => navigate({ screen: 'objects', className, stack: [] });
export const openObject = (objectId: string) => navigate({ ...route.value, stack: [...route.value.stack, objectId] });
/** Closes the top panel (Esc). */
export const closeTop = () => navigate({ ...route.value, stack: route.value.stack.slice(0, -1) });

/** A saved view (PROTOCOL.md 6.12, saved queries) being opened: the objects screen of its class takes its query, order and columns once. */
export const viewToOpen = signal<SavedQuery | undefined>(undefined);
export function openView(view: SavedQuery): void {
  viewToOpen.value = view;
  navigate({ screen: 'objects', className: view.Class, stack: [] });
}

/** The view being opened for `className`, taken once (a later visit to the class starts as usual). */
export function takeView(className: string): SavedQuery | undefined {
  const view = viewToOpen.peek();
  if (view?.Class !== className) return undefined;
  viewToOpen.value = undefined;
  return view;
}
