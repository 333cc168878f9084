import { createHash, createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Service } from '../../src/index.js';
import { demoAccess } from '../../examples/demo-access.mjs';
import { APP_KEY, call, demoService } from '../helpers.js';
import { nodeCtr, nodeKeyPair, nodeSecureLogin, secureCall, secureRequest, sendSecure, type NodeLogin } from '../secure/node-client.js';

/**
 * Files through the secure transport (PROTOCOL.md 6.6), checked by an independent node:crypto client:
 * the bodies are raw AES-256-CTR ciphertext (not base64), `application/octet-stream`, and the
 * signatures cover the ciphertext bytes.
 */
let service: Service;
let login: NodeLogin;
let n = 0;
beforeAll(async () => {
  service = await demoService({ access: demoAccess }); // every session uploads, alice (admins) replaces
  login = await nodeSecureLogin(service, nodeKeyPair());
});
afterAll(() => service.close());

const sign = (head: string, body: Buffer) => createHmac('sha256', login.mac).update(head).update(body).digest('base64');

async function sendFile(target: string, plaintext: Buffer, tamper?: (ciphertext: Buffer) => Buffer, counter = ++n) {
  const ciphertext = nodeCtr(login.key, counter, 0, plaintext);
  const headers = {
    appkey: APP_KEY,
    'secure-token': login.token,
    'secure-counter': String(counter),
    'secure-signature': sign(`REQ ${counter} POST ${target}\n`, ciphertext),
    'content-type': 'application/octet-stream',
  };
  const response = await service.fetch(new Request(`http://odbrest.test${target}`, { method: 'POST', headers, body: new Uint8Array(tamper ? tamper(ciphertext) : ciphertext) }));
  return { counter, response };
}

async function getFile(target: string, extra: Record<string, string> = {}) {
  const counter = ++n;
  const headers = { appkey: APP_KEY, 'secure-token': login.token, 'secure-counter': String(counter), 'secure-signature': sign(`REQ ${counter} GET ${target}\n`, Buffer.alloc(0)), ...extra };
  const response = await service.fetch(new Request(`http://odbrest.test${target}`, { headers }));
  const body = Buffer.from(await response.arrayBuffer());
  expect(response.headers.get('encrypted')).toBe('true');
  expect(response.headers.get('content-type')).toBe('application/octet-stream');
  expect(response.headers.get('secure-counter')).toBe(String(counter));
  expect(response.headers.get('secure-signature')).toBe(sign(`RES ${counter} ${response.status}\n`, body));
  return { response, plaintext: nodeCtr(login.key, counter, 1, body), ciphertext: body };
}

describe('files through the secure transport', () => {
  it('uploads and downloads raw AES-CTR ciphertext signed over its bytes', async () => {
    const plaintext = randomBytes(200_003); // not a whole number of blocks, several chunks
    const started = await secureCall(service, login, ++n, 'GET', '/v1/uploadFile');
    const uploadId = started.envelope.data.uploadId;
    const target = `/v1/uploadFile/${uploadId}?name=r%C3%A9sum%C3%A9.bin&contentType=application%2Fpdf`;
    const sent = await sendFile(target, plaintext);
    const text = await sent.response.text();
    expect(sent.response.headers.get('encrypted')).toBe('true');
    expect(JSON.parse(nodeCtr(login.key, sent.counter, 1, Buffer.from(text, 'base64')).toString('utf8'))).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: { size: 200_003 } });

    const finished = await secureCall(service, login, ++n, 'PATCH', `/v1/uploadFile/${uploadId}`);
    const sha256 = createHash('sha256').update(plaintext).digest('hex');
    expect(finished.envelope.data).toMatchObject({ Name: 'résumé.bin', Size: 200_003, ContentType: 'application/pdf', Sha256: sha256 });
    const fileId = finished.envelope.data['~ObjectID'];

    const whole = await getFile(`/v1/file/${fileId}`);
    expect(whole.response.status).toBe(200);
    expect(whole.response.headers.get('etag')).toBe(`"${sha256}"`);
    expect(whole.ciphertext.equals(plaintext)).toBe(false);
    expect(whole.plaintext.equals(plaintext)).toBe(true);

    const tail = await getFile(`/v1/file/${fileId}`, { range: 'bytes=-5' });
    expect(tail.response.status).toBe(206);
    expect(tail.plaintext.equals(plaintext.subarray(-5))).toBe(true);
    // issue 50, item 5: If-Range holds through the secure transport too
    const stale = await getFile(`/v1/file/${fileId}`, { range: 'bytes=-5', 'if-range': '"an older version"' });
    expect([stale.response.status, stale.plaintext.equals(plaintext)]).toEqual([200, true]);
    const current = await getFile(`/v1/file/${fileId}`, { range: 'bytes=-5', 'if-range': `"${sha256}"` });
    expect([current.response.status, current.plaintext.equals(plaintext.subarray(-5))]).toEqual([206, true]);
  });

  it('marks every sealed answer no-store, so no cache answers a later message with an earlier one', async () => {
    // a browser kept a file's answer (it had an ETag) and revalidated the next download itself: the
    // 304 gave the page the first ciphertext with the second number and signature, which then failed
    const started = await secureCall(service, login, ++n, 'GET', '/v1/uploadFile');
    const uploadId = started.envelope.data.uploadId;
    await sendFile(`/v1/uploadFile/${uploadId}`, Buffer.from('kept nowhere'));
    const fileId = (await secureCall(service, login, ++n, 'PATCH', `/v1/uploadFile/${uploadId}`)).envelope.data['~ObjectID'];
    const whole = await getFile(`/v1/file/${fileId}`);
    const part = await getFile(`/v1/file/${fileId}`, { range: 'bytes=0-3' });
    const unchanged = await getFile(`/v1/file/${fileId}`, { 'if-none-match': whole.response.headers.get('etag')! });
    expect([whole, part, unchanged].map(({ response }) => [response.status, response.headers.get('cache-control')])).toEqual([
      [200, 'no-store'],
      [206, 'no-store'],
      [304, 'no-store'],
    ]);
    const envelope = await sendSecure(service, 'GET', '/v1/uploadFile', secureRequest(login, ++n, 'GET', '/v1/uploadFile'));
    expect(envelope.headers.get('encrypted')).toBe('true');
    expect(envelope.headers.get('cache-control')).toBe('no-store');
  });

  it('keeps nothing of a forged or replayed upload and answers 205 unencrypted', async () => {
    const started = await secureCall(service, login, ++n, 'GET', '/v1/uploadFile');
    const target = `/v1/uploadFile/${started.envelope.data.uploadId}`;
    const forged = await sendFile(target, randomBytes(5000), (c) => Buffer.concat([c.subarray(0, 4999), Buffer.from([c[4999]! ^ 1])]));
    expect(forged.response.status).toBe(401);
    expect(forged.response.headers.get('encrypted')).toBeNull();
    expect(await forged.response.json()).toMatchObject({ status: { internalStatus: '205' }, data: {} });
    const size = await secureCall(service, login, ++n, 'GET', target);
    expect(size.envelope.data).toEqual({ size: 0 });

    const good = await sendFile(target, Buffer.from('accepted once'));
    expect(good.response.headers.get('encrypted')).toBe('true');
    const replay = await sendFile(target, Buffer.from('accepted once'), undefined, good.counter);
    expect(await replay.response.json()).toMatchObject({ status: { internalStatus: '205' } });
  });

  it('refuses a file body that is not application/octet-stream', async () => {
    const started = await secureCall(service, login, ++n, 'GET', '/v1/uploadFile');
    const counter = ++n;
    const target = `/v1/uploadFile/${started.envelope.data.uploadId}`;
    const result = await call(service, 'POST', target, {
      headers: { 'secure-token': login.token, 'secure-counter': String(counter), 'secure-signature': sign(`REQ ${counter} POST ${target}\n`, Buffer.from('x')), 'content-type': 'application/text' },
      body: 'x',
    });
    expect(result.body).toMatchObject({ status: { internalStatus: '205' } });
  });
});
