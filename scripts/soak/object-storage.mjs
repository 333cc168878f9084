// The soak's object storage (with --failover): s3rver (scripts/s3-server.mjs) on a free port and a
// folder of the run, holding both instances' file bytes, and its fault "object storage unavailable":
// the server stopped in the middle of a multipart upload (its connections closed, refusing), then
// started again on the same port and folder (`cut`, `start`, then `check`).
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createClient } from 'odbrest/client';
import { S3_CREDENTIALS, S3Server } from '../s3-server.mjs';
import { sleep } from './servers.mjs';

const PREFIX = 'files/';
/** Past one part (the store's default 8 MiB), so the outage strikes a multipart upload under way. */
const FIRST_BYTES = 9 * 1024 * 1024;
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

export class ObjectStorage {
  constructor(root, port) {
    const folder = join(root, 's3');
    mkdirSync(folder);
    this.server = new S3Server({ port, folder });
    this.why = `S3 storage (s3rver on port ${port})`;
  }

  start() {
    return this.server.start();
  }

  stop() {
    return this.server.stop();
  }

  /** The `files` group of api-config.yml for the instances, and the variables with the key. */
  get config() {
    return `files:\n  blobs: { url: "s3://odbrest/${PREFIX}", endpoint: "${this.server.endpoint}", forcePathStyle: true }\n`;
  }

  get env() {
    return { AWS_ACCESS_KEY_ID: S3_CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: S3_CREDENTIALS.secretAccessKey };
  }

  /**
   * The outage: an upload through `instance` whose first part went to the storage is cut by the
   * storage stopping (refusing connections) and must answer 503 with Retry-After. Answers what
   * `check` needs once the storage is back (`start`). What fails goes into `history`.
   */
  async cut({ instance, history }) {
    const acknowledged = [...history.files];
    const client = createClient({ baseUrl: instance.url, appKey: 'soak' });
    await client.login({ user: 'alice', password: 'alice-secret', appNames: ['crm'] });
    const headers = { appkey: 'soak', sessionId: client.credential.sessionId };
    const started = await fetch(`${instance.url}/v1/uploadFile`, { headers });
    const { uploadId } = (await started.json()).data;
    const key = `${PREFIX}upload-${uploadId}`;
    let goOn;
    const stopped = new Promise((resolve) => (goOn = resolve));
    const body = new ReadableStream({
      async start(controller) {
        controller.enqueue(new Uint8Array(FIRST_BYTES).fill(7));
        await stopped;
        controller.enqueue(new Uint8Array(1024 * 1024).fill(8));
        controller.close();
      },
    });
    const answer = fetch(`${instance.url}/v1/uploadFile/${uploadId}?name=outage-probe.bin`, { method: 'POST', headers: { ...headers, 'content-type': 'application/octet-stream' }, body, duplex: 'half' });
    answer.catch(() => undefined);
    // the multipart upload is under way at the storage: then the storage goes away
    for (let tries = 0; tries < 100 && !(await this.server.uploads()).some((upload) => upload.key === key); tries++) await sleep(50);
    await this.stop();
    goOn();
    const refused = await answer.then(
      (response) => ({ status: response.status, retryAfter: response.headers.get('retry-after') }),
      (error) => ({ status: 0, error: error.message }),
    );
    if (refused.status !== 503 || !(Number(refused.retryAfter) > 0)) {
      history.violation('object storage unavailable', `an upload cut by the outage answered ${refused.status || refused.error}${refused.status === 503 ? ' without Retry-After' : ''}, not 503 with Retry-After`);
    }
    return { client, headers, instance, history, uploadId, key, acknowledged, refused };
  }

  /**
   * After the outage (the storage back): the upload it cut must not become visible (no object under
   * its key, finishing it refused) and every file acknowledged before it reads back byte for byte.
   * Answers how many files were read back.
   */
  async check({ client, headers, instance, history, uploadId, key, acknowledged }) {
    const object = await fetchSigned(`${this.server.endpoint}/odbrest/${key}`, { method: 'HEAD' });
    if (object.status !== 404) history.phantom(key, `the upload cut by the outage is an object in the storage (HEAD answered ${object.status})`);
    const finished = await fetch(`${instance.url}/v1/uploadFile/${uploadId}`, { method: 'PATCH', headers });
    if (finished.status === 200) history.phantom(uploadId, `the upload cut by the outage became the file ${(await finished.json()).data?.['~ObjectID']}`);
    else await finished.body?.cancel();
    for (const file of acknowledged) {
      const read = await client.downloadFile(file.id).then(
        async (download) => sha256(Buffer.from(await new Response(download.stream).arrayBuffer())),
        (error) => `an error (${error.message})`,
      );
      if (read !== file.sha256) history.lost(file.id, `acknowledged before the object storage outage, read back after it as ${read.length === 64 ? 'other bytes' : read}`);
    }
    return acknowledged.length;
  }
}

async function fetchSigned(address, init) {
  const { AwsClient } = await import('aws4fetch');
  return new AwsClient({ ...S3_CREDENTIALS, service: 's3', region: 'us-east-1' }).fetch(address, init);
}
