import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { demoAccess } from '../../examples/demo-access.mjs';
import { MemoryBlobStore, type BlobStore, type Service, type ServiceOptions } from '../../src/index.js';
import { FolderBlobStore } from '../../stores/file-store.js';
import { call, demoService, expectError, login, testClock, type CallResult } from '../helpers.js';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const encoder = new TextEncoder();

/** A multipart body as the Dart client sends it: one file part whose field name is empty. */
function dartMultipart(filename: string, bytes: Uint8Array, type = 'text/plain'): { body: Uint8Array<ArrayBuffer>; contentType: string } {
  const boundary = 'dart-http-boundary-Z5vq0Z9ZqLx';
  const head = encoder.encode(`--${boundary}\r\ncontent-type: ${type}\r\ncontent-disposition: form-data; name=""; filename="${filename}"\r\n\r\n`);
  const tail = encoder.encode(`\r\n--${boundary}--\r\n`);
  return { body: new Uint8Array(Buffer.concat([head, bytes, tail])), contentType: `multipart/form-data; boundary=${boundary}` };
}

let service: Service;
let session: string;
afterEach(() => service?.close());

/** The demo service with the demo's rules: every session reads and uploads files, `admins` (alice) replace and delete them. */
async function start(options: ServiceOptions = {}) {
  service = await demoService({ access: demoAccess, ...options });
  session = await login(service, 'alice');
}

const auth = () => ({ sessionId: session });

async function newUpload(sessionId = session): Promise<string> {
  const started = await call(service, 'GET', '/v1/uploadFile', { headers: { sessionId } });
  expect(started.status).toBe(200);
  expect(started.body.data.uploadId).toMatch(/^[A-Za-z0-9_-]{22}$/);
  return started.body.data.uploadId;
}

/** The three steps (as `sessionId`, alice by default); answers the PATCH result. */
async function upload(body: BodyInit, headers: Record<string, string>, query = '', sessionId = session): Promise<CallResult> {
  const id = await newUpload(sessionId);
  const sent = await call(service, 'POST', `/v1/uploadFile/${id}`, { headers: { sessionId, ...headers }, body });
  expect(sent.body).toMatchObject({ status: { internalStatus: '0' } });
  return call(service, 'PATCH', `/v1/uploadFile/${id}${query}`, { headers: { sessionId } });
}

async function fetchFile(id: string, headers: Record<string, string> = {}): Promise<Response> {
  return service.fetch(new Request(`http://odbrest.test/v1/file/${id}`, { headers: { appkey: 'test-app', ...auth(), ...headers } }));
}

describe('uploads (PROTOCOL.md 6.6)', () => {
  it('takes a multipart body with an empty field name (the Dart client) and serves it back', async () => {
    await start();
    const bytes = encoder.encode('hello, files\n');
    const { body, contentType } = dartMultipart('hello.txt', bytes);
    const finished = await upload(body, { 'content-type': contentType });
    expect(finished.status).toBe(200);
    const file = finished.body.data;
    expect(finished.body).toEqual({
      status: { internalStatus: '0', statusMessage: 'ok' },
      data: { '~ClassName': 'Document', '~ObjectID': file['~ObjectID'], '~StoreTime': file['~StoreTime'], Name: 'hello.txt', Size: 13, ContentType: 'text/plain', Sha256: sha256(bytes) },
    });
    const response = await fetchFile(file['~ObjectID']);
    expect(response.status).toBe(200);
    expect(Object.fromEntries(response.headers)).toMatchObject({
      'content-type': 'text/plain',
      'content-length': '13',
      'content-disposition': 'attachment; filename=hello.txt',
      etag: `"${sha256(bytes)}"`,
      'accept-ranges': 'bytes',
    });
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(bytes);
  });

  it('takes a FormData body and a raw body with its own Content-Type', async () => {
    await start();
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array([1, 2, 3])], { type: 'application/pdf' }), 'a.pdf');
    const viaForm = await upload(form, {});
    expect(viaForm.body.data).toMatchObject({ Name: 'a.pdf', Size: 3, ContentType: 'application/pdf' });

    const raw = await upload(new Uint8Array([9, 8, 7, 6]), { 'content-type': 'image/png' }, '');
    expect(raw.body.data).toMatchObject({ Name: 'upload', Size: 4, ContentType: 'image/png', Sha256: sha256(new Uint8Array([9, 8, 7, 6])) });
    const named = await upload('x', { 'content-type': 'text/csv', 'content-disposition': 'attachment; filename="list.csv"' });
    expect(named.body.data).toMatchObject({ Name: 'list.csv', ContentType: 'text/csv' });
  });

  it('stores a 0-byte file and serves it with Content-Length 0', async () => {
    await start();
    const finished = await upload(new Uint8Array(0), { 'content-type': 'text/plain' });
    expect(finished.body.data).toMatchObject({ Size: 0, Sha256: sha256(new Uint8Array(0)) });
    const response = await fetchFile(finished.body.data['~ObjectID']);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe('0');
    expect((await response.arrayBuffer()).byteLength).toBe(0);
  });

  it('encodes a non-ASCII name as RFC 6266 requires', async () => {
    await start();
    const { body, contentType } = dartMultipart('Übersicht €.txt', encoder.encode('x'));
    const finished = await upload(body, { 'content-type': contentType });
    expect(finished.body.data.Name).toBe('Übersicht €.txt');
    const response = await fetchFile(finished.body.data['~ObjectID']);
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="?bersicht ?.txt"; filename*=UTF-8''%C3%9Cbersicht%20%E2%82%AC.txt`);
  });

  it('answers 413 once the limit is passed, without reading the rest of the body', async () => {
    await start({ files: { maxUploadBytes: 1000 } });
    for (const multipart of [false, true]) {
      let produced = 0;
      const total = 64 * 1024 * 1024;
      const boundary = 'b0undary';
      const endless = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (produced === 0 && multipart) controller.enqueue(encoder.encode(`--${boundary}\r\ncontent-disposition: form-data; name=""; filename="big"\r\n\r\n`));
          const chunk = new Uint8Array(501);
          produced += chunk.length;
          controller.enqueue(chunk);
          if (produced >= total) controller.close();
        },
      });
      const id = await newUpload();
      const contentType = multipart ? `multipart/form-data; boundary=${boundary}` : 'application/octet-stream';
      const request = new Request(`http://odbrest.test/v1/uploadFile/${id}`, {
        method: 'POST',
        headers: { appkey: 'test-app', sessionId: session, 'content-type': contentType },
        body: endless,
        duplex: 'half',
      } as RequestInit);
      const response = await service.fetch(request);
      expect(response.status).toBe(413);
      expect(await response.json()).toMatchObject({ status: { internalStatus: '413' }, data: {} });
      expect(produced).toBeLessThan(16 * 1024);
      expectError(await call(service, 'PATCH', `/v1/uploadFile/${id}`, { headers: auth() }), '400', 400);
    }
    // exactly at the limit is fine; a declared length over it is refused before any byte is read
    expect((await upload(new Uint8Array(1000), { 'content-type': 'application/octet-stream' })).body.data.Size).toBe(1000);
    const id = await newUpload();
    expectError(await call(service, 'POST', `/v1/uploadFile/${id}`, { headers: { ...auth(), 'content-type': 'text/plain' }, body: 'x'.repeat(1001) }), '413', 413);
  });

  it('reports the size received, and replaces a file’s bytes with replaceOID', async () => {
    await start();
    const first = await upload('version one', { 'content-type': 'text/plain' }, '');
    const fileId = first.body.data['~ObjectID'];
    const id = await newUpload();
    expect((await call(service, 'GET', `/v1/uploadFile/${id}`, { headers: auth() })).body).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: { size: 0 } });
    await call(service, 'POST', `/v1/uploadFile/${id}?name=v2.txt`, { headers: { ...auth(), 'content-type': 'text/markdown' }, body: 'version two!' });
    expect((await call(service, 'GET', `/v1/uploadFile/${id}`, { headers: auth() })).body.data).toEqual({ size: 12 });
    const replaced = await call(service, 'PATCH', `/v1/uploadFile/${id}?replaceOID=${fileId}`, { headers: auth() });
    expect(replaced.body.data).toMatchObject({ '~ObjectID': fileId, Name: 'v2.txt', Size: 12, ContentType: 'text/markdown', Sha256: sha256(encoder.encode('version two!')) });
    expect(await (await fetchFile(fileId)).text()).toBe('version two!');
    // the upload is finished: its id is gone
    expectError(await call(service, 'PATCH', `/v1/uploadFile/${id}`, { headers: auth() }), '404', 404);
    expectError(await call(service, 'GET', `/v1/uploadFile/${id}`, { headers: auth() }), '404', 404);
    // replaceOID must name a file
    const other = await newUpload();
    await call(service, 'POST', `/v1/uploadFile/${other}`, { headers: auth(), body: 'x' });
    expectError(await call(service, 'PATCH', `/v1/uploadFile/${other}?replaceOID=CUS00001`, { headers: auth() }), '404', 404);
  });

  it('keeps an upload to the principal that started it, and drops it after an hour', async () => {
    const clock = testClock();
    await start({ now: clock.now });
    const id = await newUpload();
    const bob = await login(service, 'bob');
    expectError(await call(service, 'POST', `/v1/uploadFile/${id}`, { headers: { sessionId: bob }, body: 'x' }), '404', 404);
    expectError(await call(service, 'GET', `/v1/uploadFile/${id}`, { headers: { sessionId: bob } }), '404', 404);
    await call(service, 'POST', `/v1/uploadFile/${id}`, { headers: auth(), body: 'x' });
    clock.advance(60 * 60_000 + 1);
    session = await login(service, 'alice');
    expectError(await call(service, 'PATCH', `/v1/uploadFile/${id}`, { headers: auth() }), '404', 404);
    expectError(await call(service, 'GET', `/v1/uploadFile/not-an-upload-id`, { headers: auth() }), '404', 404);
  });

  it('refuses uploads by a session without objects rights, and bad multipart bodies', async () => {
    await start();
    const macroOnly = await login(service, 'dave', []);
    expectError(await call(service, 'GET', '/v1/uploadFile', { headers: { sessionId: macroOnly } }), '307', 403);
    expectError(await call(service, 'GET', '/v1/uploadFile'), '204', 401);
    const type = { 'content-type': 'multipart/form-data; boundary=xyz' };
    const cases: Array<[string, Record<string, string>]> = [
      ['--xyz\r\ncontent-disposition: form-data; name="a"\r\n\r\nvalue\r\n--xyz--\r\n', type], // no file part
      ['--xyz\r\ncontent-disposition: form-data; name=""; filename="a"\r\n\r\n1\r\n--xyz\r\ncontent-disposition: form-data; name=""; filename="b"\r\n\r\n2\r\n--xyz--\r\n', type],
      ['--xyz\r\ncontent-disposition: form-data; name=""; filename="a"\r\n\r\ntruncated', type],
      ['--xyz\r\n\r\n', { 'content-type': 'multipart/form-data' }], // no boundary
    ];
    for (const [body, headers] of cases) {
      const id = await newUpload();
      expectError(await call(service, 'POST', `/v1/uploadFile/${id}`, { headers: { ...auth(), ...headers }, body }), '400', 400);
      expect((await call(service, 'GET', `/v1/uploadFile/${id}`, { headers: auth() })).body.data).toEqual({ size: 0 });
    }
  });

  it('never takes an upload inside /v1/multi', async () => {
    await start();
    const id = await newUpload();
    const multi = await call(service, 'POST', '/v1/multi', { headers: auth(), json: [{ method: 'POST', path: `/v1/uploadFile/${id}`, data: { a: 1 } }] });
    expect(multi.body.data[0].httpStatus).toBe(400);
  });
});

describe('downloads (PROTOCOL.md 6.6)', () => {
  async function tenBytes(): Promise<string> {
    await start();
    return (await upload('0123456789', { 'content-type': 'text/plain' })).body.data['~ObjectID'];
  }

  it('answers single ranges with 206 and Content-Range, and 416 past the end', async () => {
    const id = await tenBytes();
    const cases: Array<[string, string, string]> = [
      ['bytes=0-0', '0', 'bytes 0-0/10'], // first byte
      ['bytes=9-9', '9', 'bytes 9-9/10'], // last byte
      ['bytes=-3', '789', 'bytes 7-9/10'], // suffix
      ['bytes=8-', '89', 'bytes 8-9/10'],
      ['bytes=5-99', '56789', 'bytes 5-9/10'], // clipped
    ];
    for (const [range, body, contentRange] of cases) {
      const response = await fetchFile(id, { range });
      expect([response.status, response.headers.get('content-range'), response.headers.get('content-length'), await response.text()]).toEqual([206, contentRange, String(body.length), body]);
    }
    const past = await fetchFile(id, { range: 'bytes=10-' });
    expect(past.status).toBe(416);
    expect(past.headers.get('content-range')).toBe('bytes */10');
    // PROTOCOL.md 1.4 lists no 416 code: the envelope carries 400, the HTTP status stays 416
    expect(await past.json()).toEqual({ status: { internalStatus: '400', statusMessage: "the requested range lies outside the file's 10 bytes" }, data: {} });
    // several ranges, or one that is not bytes, get the whole file
    for (const range of ['bytes=0-1,3-4', 'lines=1-2', 'bytes=x']) {
      const whole = await fetchFile(id, { range });
      expect([whole.status, await whole.text()]).toEqual([200, '0123456789']);
    }
  });

  it('issue 23, item 7: Range as RFC 9110 says: invalid forms ignored, unsatisfiable ones 416, several ranges the whole file', async () => {
    const id = await tenBytes();
    const answer = async (range: string) => {
      const response = await fetchFile(id, { range });
      const text = await response.text();
      return { status: response.status, contentRange: response.headers.get('content-range'), text: response.status === 416 ? JSON.parse(text) : text };
    };
    const unsatisfiable = { status: 416, contentRange: 'bytes */10', text: { status: { internalStatus: '400', statusMessage: "the requested range lies outside the file's 10 bytes" }, data: {} } };
    const whole = { status: 200, contentRange: null, text: '0123456789' };
    const cases: Array<[string, unknown]> = [
      ['bytes=-0', unsatisfiable], // a suffix of 0 bytes selects nothing
      ['bytes=10-20', unsatisfiable],
      ['bytes=20-30,40-50', unsatisfiable], // none of several can be satisfied
      ['bytes=99999999999999999999-', unsatisfiable],
      ['bytes=5-2', whole], // last < first: invalid, ignored
      ['bytes=abc', whole],
      ['bytes=1-2-3', whole],
      ['bytes=', whole],
      ['bytes=--1', whole],
      ['items=0-1', whole],
      ['bytes=0-1,3-4', whole], // several ranges: the whole file, no multipart answer
      ['bytes=0-1,20-30', whole],
      ['bytes=-100', { status: 206, contentRange: 'bytes 0-9/10', text: '0123456789' }], // a suffix longer than the file: all of it
      ['Bytes=2-3', { status: 206, contentRange: 'bytes 2-3/10', text: '23' }], // the unit is case-insensitive
      ['bytes= 4-4 ,', { status: 206, contentRange: 'bytes 4-4/10', text: '4' }], // spaces and empty list elements
      ['bytes=3-99999999999999999999', { status: 206, contentRange: 'bytes 3-9/10', text: '3456789' }],
    ];
    for (const [range, expected] of cases) expect({ range, ...(await answer(range)) }).toEqual({ range, ...(expected as object) });
  });

  it('issue 50, item 5: a Range under an If-Range that names another version gets the whole current file and 200, on /v1/file and /v2/file', async () => {
    await start();
    const first = (await upload('version one', { 'content-type': 'text/plain' })).body.data;
    const id = first['~ObjectID'];
    const oldTag = `"${first.Sha256}"`;
    const second = (await upload('version two, longer', { 'content-type': 'text/plain' }, `?replaceOID=${id}`)).body.data;
    const tag = `"${second.Sha256}"`;
    const [, y, mo, d, h, mi, sec] = /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)/.exec(second['~StoreTime'])!.map(Number);
    const changed = Date.UTC(y!, mo! - 1, d!, h!, mi!, sec!);
    const httpDate = (ms: number) => new Date(ms).toUTCString();
    type Answer = { status: number; contentRange: string | null; text: string };
    const whole: Answer = { status: 200, contentRange: null, text: 'version two, longer' };
    const resumed = { status: 206, contentRange: 'bytes 5-18/19', text: 'on two, longer' };
    const cases: Array<[string, string, Answer]> = [
      ['bytes=5-', oldTag, whole], // the old version's tag: never the new bytes' end joined to the old start
      ['bytes=5-', tag, resumed],
      ['bytes=5-', `W/${tag}`, whole], // weak tags never match (strong comparison)
      ['bytes=5-', tag.toUpperCase(), whole],
      ['bytes=5-', httpDate(changed + 1000), resumed], // a date after the last change
      ['bytes=5-', httpDate(changed), whole], // not after it
      ['bytes=5-', httpDate(Date.UTC(1994, 10, 6)), whole],
      ['bytes=5-', 'Sunday, 06-Nov-94 08:49:37 GMT', whole], // RFC 850 form
      ['bytes=5-', 'Sun Nov  6 08:49:37 2150', resumed], // asctime form, UTC
      ['bytes=5-', '9999', whole], // not an HTTP-date
      ['bytes=5-', 'yesterday', whole],
      ['bytes=99-', oldTag, whole], // the Range is ignored before it is found unsatisfiable
    ];
    for (const path of ['/v1/file', '/v2/file']) {
      for (const [range, ifRange, expected] of cases) {
        const response = await service.fetch(new Request(`http://odbrest.test${path}/${id}`, { headers: { appkey: 'test-app', ...auth(), range, 'if-range': ifRange } }));
        expect({ path, ifRange, status: response.status, contentRange: response.headers.get('content-range'), text: await response.text() }).toEqual({ path, ifRange, ...expected });
      }
    }
  });

  it('answers If-None-Match with 304 when the ETag matches', async () => {
    const id = await tenBytes();
    const etag = (await fetchFile(id)).headers.get('etag')!;
    const same = await fetchFile(id, { 'if-none-match': `"other", ${etag}` });
    expect([same.status, same.headers.get('etag'), await same.text()]).toEqual([304, etag, '']);
    expect((await fetchFile(id, { 'if-none-match': '"other"' })).status).toBe(200);
  });

  it('answers 404 for an unknown id or an object that is not a file', async () => {
    await tenBytes();
    for (const id of ['NOPE0000', 'CUS00001']) {
      const response = await fetchFile(id);
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ status: { internalStatus: '404' }, data: {} });
    }
  });
});

describe('files follow the access rules (PROTOCOL.md 6.4, 6.6)', () => {
  const bytesOf = async (blobs: BlobStore, id: string) => {
    const read = await blobs.get(id);
    return read && new Uint8Array(await new Response(read.stream).arrayBuffer());
  };

  it('refuses uploads to a session without the create (or update) right, downloads to one without read', async () => {
    // the default rules: every session reads, nobody writes
    service = await demoService();
    session = await login(service, 'alice');
    expectError(await call(service, 'GET', '/v1/uploadFile', { headers: auth() }), '403', 403);
    expect((await fetchFile('DOC00001')).status).not.toBe(403); // read stays allowed (the demo bytes are not in this store)
    await service.close();

    // bob (support) may update but not create: he may start an upload, but finishing one is 403 unless it replaces a file
    await start({ access: { rules: { Document: { create: ['admins'], update: ['support'] } } } });
    const bob = await login(service, 'bob');
    const id = await newUpload(bob);
    expect((await call(service, 'POST', `/v1/uploadFile/${id}`, { headers: { sessionId: bob }, body: 'by bob' })).body.status.internalStatus).toBe('0');
    expectError(await call(service, 'PATCH', `/v1/uploadFile/${id}`, { headers: { sessionId: bob } }), '403', 403);
    expect((await call(service, 'PATCH', `/v1/uploadFile/${id}?replaceOID=DOC00002`, { headers: { sessionId: bob } })).body.data).toMatchObject({ '~ObjectID': 'DOC00002', Size: 6 });
    await service.close();

    // nobody reads documents: a download is 404 (the file's existence is not revealed), as is replacing it
    await start({ access: { rules: { Document: { read: [], create: ['*'], update: ['*'] } } } });
    const created = (await upload('secret', { 'content-type': 'text/plain' })).body.data['~ObjectID'];
    expect((await fetchFile(created)).status).toBe(404);
    const again = await newUpload();
    await call(service, 'POST', `/v1/uploadFile/${again}`, { headers: auth(), body: 'x' });
    expectError(await call(service, 'PATCH', `/v1/uploadFile/${again}?replaceOID=${created}`, { headers: auth() }), '404', 404);
  });

  it('lets every demo session upload and read files, only admins replace them; authorize narrows per file', async () => {
    await start({ access: { ...demoAccess, authorizeClasses: undefined, authorize: (_context, { className, object }) => className !== 'Document' || object?.fields.Name !== 'hidden.txt' } });
    const bob = await login(service, 'bob');
    const mine = (await upload('bob was here', { 'content-type': 'text/plain', 'content-disposition': 'attachment; filename="bob.txt"' }, '', bob)).body.data;
    expect(mine).toMatchObject({ Name: 'bob.txt', Size: 12 });
    expect(await (await fetchFile(mine['~ObjectID'])).text()).toBe('bob was here'); // alice reads it
    const id = await newUpload(bob);
    await call(service, 'POST', `/v1/uploadFile/${id}`, { headers: { sessionId: bob }, body: 'replaced by bob' });
    expectError(await call(service, 'PATCH', `/v1/uploadFile/${id}?replaceOID=${mine['~ObjectID']}`, { headers: { sessionId: bob } }), '403', 403);
    expect(await (await fetchFile(mine['~ObjectID'])).text()).toBe('bob was here');
    const hidden = (await upload('x', { 'content-type': 'text/plain', 'content-disposition': 'attachment; filename="hidden.txt"' })).body.data['~ObjectID'];
    expect((await fetchFile(hidden)).status).toBe(404);
  });

  it('deletes a file’s bytes with its object; a session without the delete right gets 403 and the bytes stay', async () => {
    const blobs = new MemoryBlobStore();
    await start({ files: { blobs } });
    const bytes = encoder.encode('to be deleted');
    const id = (await upload(bytes, { 'content-type': 'text/plain' })).body.data['~ObjectID'];
    expect(await bytesOf(blobs, id)).toEqual(bytes);

    const bob = await login(service, 'bob');
    expectError(await call(service, 'DELETE', `/v1/object/${id}`, { headers: { sessionId: bob } }), '403', 403);
    expect(await bytesOf(blobs, id)).toEqual(bytes);
    expect((await fetchFile(id)).status).toBe(200);

    expect((await call(service, 'DELETE', `/v1/object/${id}`, { headers: auth() })).body).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: {} });
    const gone = await fetchFile(id);
    expect([gone.status, (await gone.json()).status.internalStatus]).toEqual([404, '404']);
    expect(await blobs.stat(id)).toBeUndefined();
    expect(await blobs.get(id)).toBeUndefined();
    // the same through /v1/multi
    const other = (await upload('second', { 'content-type': 'text/plain' })).body.data['~ObjectID'];
    const multi = await call(service, 'POST', '/v1/multi', { headers: auth(), json: [{ method: 'DELETE', path: `/v1/object/${other}` }] });
    expect(multi.body.data[0].httpStatus).toBe(200);
    expect(await blobs.stat(other)).toBeUndefined();
  });

  it('leaves no bytes behind on disk: replaceOID replaces the old blob, delete removes the file', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'odbrest-files15-'));
    try {
      const blobs = await FolderBlobStore.open({ path: folder });
      await start({ files: { blobs } });
      const files = () => readdirSync(folder).filter((name) => name !== '.lock').sort(); // the store's lock (issue 50, item 6)
      const id = (await upload('version one', { 'content-type': 'text/plain' })).body.data['~ObjectID'];
      const [stored] = files();
      expect(files()).toEqual([stored]);
      const replaced = await upload('version two, longer', { 'content-type': 'text/plain' }, `?replaceOID=${id}`);
      expect(replaced.body.data).toMatchObject({ '~ObjectID': id, Size: 19 });
      expect(files()).toEqual([stored]); // one file, under the file's own name: the old bytes were replaced, the upload's moved
      expect(await (await fetchFile(id)).text()).toBe('version two, longer');
      await call(service, 'DELETE', `/v1/object/${id}`, { headers: auth() });
      expect(files()).toEqual([]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('the fields the bytes decide', () => {
  it('Size, ContentType and Sha256 are written only by uploads; Name may change; an object made without bytes gets them by replaceOID', async () => {
    await start();
    const json = (method: string, path: string, body: unknown) => call(service, method, path, { headers: auth(), json: body });
    const stored = (await call(service, 'GET', '/v1/object/DOC00001', { headers: auth() })).body.data;
    for (const [name, value] of [['Size', 1], ['ContentType', 'text/html'], ['Sha256', 'ab'.repeat(32)]] as const) {
      const refused = await json('PATCH', '/v1/object/DOC00001', { [name]: value });
      expectError(refused, '400', 400);
      expect(refused.body.status.statusMessage).toBe(`${name} of a Document object is set by uploading its bytes (/v1/uploadFile), not written`);
      expectError(await json('POST', '/v1/object/Document', { Name: 'x', [name]: value }), '400', 400);
    }
    // a client that sends back the object it read, renamed, changes nothing the bytes decide
    const renamed = await json('PATCH', '/v1/object/DOC00001', { ...stored, Name: 'renamed.txt' });
    expect(renamed.body.data).toMatchObject({ Name: 'renamed.txt', Size: stored.Size, Sha256: stored.Sha256 });

    const bare = (await json('POST', '/v1/object/Document', { Name: 'later.txt' })).body.data;
    expect((await fetchFile(bare['~ObjectID'])).status).toBe(404);
    const bytes = encoder.encode('the bytes come later\n');
    const finished = await upload(bytes, { 'content-type': 'text/plain' }, `?replaceOID=${bare['~ObjectID']}`);
    expect(finished.body.data).toMatchObject({ '~ObjectID': bare['~ObjectID'], Size: bytes.length, Sha256: sha256(bytes) });
    expect(new Uint8Array(await (await fetchFile(bare['~ObjectID'])).arrayBuffer())).toEqual(bytes);
  });
});

describe('uploads are writes', () => {
  it('run the write hooks: beforeWrite sees the create or the replace and may change the fields, afterWrite what was stored', async () => {
    const seen: string[] = [];
    await start({
      objects: {
        beforeWrite: async (context, change) => {
          seen.push(`before ${change.action} ${change.className} ${String(change.fields?.Name)} by ${String((await context.user())?.fields.Name)}`);
          return { ...change.fields!, Tag: 'checked' };
        },
        afterWrite: (_context, result) => void seen.push(`after ${result.action} ${result.object?.id === undefined ? '' : 'stored'} ${String(result.object?.fields.Tag)}`),
      },
    });
    const created = (await upload('one', { 'content-type': 'text/plain', 'content-disposition': 'attachment; filename="one.txt"' })).body.data;
    expect(created).toMatchObject({ Name: 'one.txt', Tag: 'checked' });
    await upload('two', { 'content-type': 'text/plain', 'content-disposition': 'attachment; filename="two.txt"' }, `?replaceOID=${created['~ObjectID']}`);
    expect(seen).toEqual(['before create Document one.txt by alice', 'after create stored checked', 'before update Document two.txt by alice', 'after update stored checked']);
  });

  it('a file deleted while a replaceOID moves its new bytes in stays deleted, bytes too (404)', async () => {
    const blobs = new MemoryBlobStore();
    let moved!: () => void;
    const gate = new Promise<void>((resolve) => (moved = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = false;
    const move = async (from: string, to: string) => {
      const done = await blobs.move(from, to);
      if (holding) {
        moved();
        await held;
      }
      return done;
    };
    const slowMove = new Proxy<BlobStore>(blobs, {
      get: (target, name) => {
        if (name === 'move') return move;
        const value: unknown = Reflect.get(target, name);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    await start({ files: { blobs: slowMove } });
    const created = (await upload('first', { 'content-type': 'text/plain' })).body.data['~ObjectID'];
    const id = await newUpload();
    await call(service, 'POST', `/v1/uploadFile/${id}`, { headers: auth(), body: 'second' });
    holding = true;
    const replacing = call(service, 'PATCH', `/v1/uploadFile/${id}?replaceOID=${created}`, { headers: auth() });
    await gate; // the new bytes are under the file's id; its object is deleted now
    expect((await call(service, 'DELETE', `/v1/object/${created}`, { headers: auth() })).body.status.internalStatus).toBe('0');
    release();
    expectError(await replacing, '404', 404);
    expect(await blobs.stat(created)).toBeUndefined();
    expectError(await call(service, 'GET', `/v1/object/${created}`, { headers: auth() }), '404', 404);
  });
});
