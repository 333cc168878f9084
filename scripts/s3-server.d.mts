/** The credentials s3rver accepts. */
export const S3_CREDENTIALS: { readonly accessKeyId: string; readonly secretAccessKey: string };
/**
 * An S3 server (s3rver, with AbortMultipartUpload and ListMultipartUploads added) on 127.0.0.1:
 * `start()` answers its endpoint; `stop()` makes it unreachable, `start()` again brings it back on
 * the same port with the same objects.
 */
export class S3Server {
  constructor(options?: { port?: number; folder?: string; buckets?: string[] });
  readonly folder: string;
  readonly port: number;
  readonly endpoint: string;
  start(): Promise<string>;
  stop(): Promise<void>;
  /** The multipart uploads under way in `bucket` (read from the server's folder). */
  uploads(bucket?: string): Promise<Array<{ key: string; uploadId: string }>>;
  remove(): Promise<void>;
}
