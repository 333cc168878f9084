/**
 * What the service tells the page in its `<meta name="odbrest-studio">` (no inline script: the CSP
 * forbids it): where the API is relative to the page, the app key, the default applications and
 * the host's API reference page.
 */
interface StudioConfig {
  /** The service root, absolute (resolved against the page's address). */
  apiBase: string;
  appKey: string;
  appNames: string[];
  /** The class of file objects (PROTOCOL.md 6.6): its table offers uploads. */
  fileClass: string;
  /** The largest upload the service takes (`maxUploadBytes`); a larger file is refused before it is sent. */
  maxUploadBytes: number;
  /** The host's API reference page (the studio option `docs`), absolute; absent: no link to it. */
  docs?: string;
}

function readConfig(): StudioConfig {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="odbrest-studio"]');
  const given = JSON.parse(meta?.content || '{}') as { api?: string; appKey?: string; appNames?: string[]; fileClass?: string; maxUploadBytes?: number; docs?: string };
  return {
    apiBase: new URL(given.api ?? '../', location.href).href.replace(/\/$/, ''),
    appKey: given.appKey ?? 'odbrest-studio',
    appNames: given.appNames ?? [],
    fileClass: given.fileClass ?? 'Document',
    maxUploadBytes: given.maxUploadBytes ?? Number.POSITIVE_INFINITY,
    ...(given.docs ? { docs: new URL(given.docs, location.href).href } : {}),
  };
}

export const config = readConfig();
