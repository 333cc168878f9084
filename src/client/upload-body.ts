/**
 * How the client sends a file's bytes (PROTOCOL.md 6.6), and how it reports their progress.
 *
 * Server runtimes (Node, Bun, Deno) send a streamed request body over HTTP/1.1, so a file is read as
 * it is sent, never held whole. Browsers do not: Chromium sends one only over HTTP/2 or QUIC (over
 * HTTP/1.1 the fetch fails), Firefox and Safari never. In a browser the body is therefore a Blob,
 * which the browser reads from its own storage as it sends it; and since fetch reports no upload
 * progress, a browser upload that asks for it goes through XMLHttpRequest. XMLHttpRequest is also
 * how the client tells a browser: no server runtime has it.
 */
import type { FetchFunction, UploadProgress } from './types.js';

/** Whether this runtime is a browser (or a browser's worker): it cannot stream a request body over HTTP/1.1. */
export const isBrowser = (): boolean => typeof XMLHttpRequest === 'function';

/** Blob parts of at most this size: a browser keeps a large Blob in its own storage, not in the page's memory. */
const BLOB_PART_BYTES = 4 * 1024 * 1024;

/** A stream's bytes as a Blob, gathered in parts of `BLOB_PART_BYTES` (the page holds one part at a time). */
export async function blobOf(stream: ReadableStream<Uint8Array>): Promise<Blob> {
  const parts: Blob[] = [];
  let chunks: Uint8Array<ArrayBuffer>[] = [];
  let held = 0;
  await stream.pipeTo(
    new WritableStream({
      write(chunk) {
        chunks.push(chunk as Uint8Array<ArrayBuffer>);
        held += chunk.byteLength;
        if (held < BLOB_PART_BYTES) return;
        parts.push(new Blob(chunks));
        chunks = [];
        held = 0;
      },
    }),
  );
  return new Blob([...parts, ...chunks]);
}

/**
 * `fetchFn` with `onProgress` told how much of the request body (`total` bytes) has gone: in a
 * browser through XMLHttpRequest's upload events (not through `fetchFn`: fetch has none), elsewhere
 * by counting the body's bytes as fetch reads them. `onProgress` hears the last count once the
 * answer is in; a callback that throws does not stop the upload.
 */
export function reportingFetch(fetchFn: FetchFunction, onProgress: UploadProgress, total: number): FetchFunction {
  let told = -1;
  const tell = (loaded: number) => {
    if (loaded === told) return;
    told = loaded;
    try {
      onProgress({ loaded, total });
    } catch {
      // the caller's display failed: the upload goes on
    }
  };
  const send = isBrowser() ? xhrFetch(tell) : countingFetch(fetchFn, tell);
  return async (input, init) => {
    const response = await send(input, init);
    if (response.ok) tell(total);
    return response;
  };
}

/** Slices of the body counted at most this large: a Blob in memory streams as one chunk in Node. */
const COUNTED_SLICE_BYTES = 64 * 1024;

/** A fetch whose request body is streamed (`duplex: 'half'`) in counted slices, each read only when fetch asks for it. */
function countingFetch(fetchFn: FetchFunction, tell: (loaded: number) => void): FetchFunction {
  return (input, init) => {
    const given = init.body;
    if (!(given instanceof Blob) && !(given instanceof ReadableStream)) return fetchFn(input, init);
    const reader = (given instanceof Blob ? given.stream() : (given as ReadableStream<Uint8Array>)).getReader();
    let chunk: Uint8Array = new Uint8Array(0);
    let offset = 0;
    let loaded = 0;
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          while (offset >= chunk.length) {
            const next = await reader.read();
            if (next.done) return controller.close();
            [chunk, offset] = [next.value, 0];
          }
          const slice = chunk.subarray(offset, offset + COUNTED_SLICE_BYTES);
          offset += slice.length;
          controller.enqueue(slice);
          loaded += slice.length;
          tell(loaded);
        },
        cancel: (reason) => reader.cancel(reason),
      },
      { highWaterMark: 0 },
    );
    return fetchFn(input, { ...init, body, duplex: 'half' } as RequestInit);
  };
}

/** Statuses whose Response has no body. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** fetch through XMLHttpRequest, for its upload progress; a failure to reach the server is a TypeError, as fetch's. */
function xhrFetch(tell: (loaded: number) => void): FetchFunction {
  return (input, init) =>
    new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open(init.method ?? 'GET', input);
      xhr.responseType = 'arraybuffer';
      new Headers(init.headers).forEach((value, name) => xhr.setRequestHeader(name, value));
      xhr.upload.onprogress = (event) => tell(event.loaded);
      xhr.onload = () => {
        const headers = new Headers();
        for (const line of xhr.getAllResponseHeaders().trim().split(/[\r\n]+/)) {
          const colon = line.indexOf(':');
          if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
        }
        resolve(new Response(NULL_BODY.has(xhr.status) ? null : (xhr.response as ArrayBuffer), { status: xhr.status, statusText: xhr.statusText, headers }));
      };
      const fail = (why: string) => () => reject(new TypeError(`upload ${why}`));
      xhr.onerror = fail('failed: the server could not be reached');
      xhr.ontimeout = fail('timed out');
      xhr.send(init.body as XMLHttpRequestBodyInit | null);
    });
}
