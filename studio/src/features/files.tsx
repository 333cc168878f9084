import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import type { OdbRestClient, SerializedObject } from 'odbrest/client';
import { failureText } from '../data.js';
import { t } from '../i18n/index.js';
import { saveBlob } from './save.js';

/** Previews read at most this much: an image up to 10 MB, a text up to 1 MB (its first 100,000 characters shown). */
const IMAGE_LIMIT = 10 * 1024 * 1024;
const TEXT_LIMIT = 1024 * 1024;
const TEXT_SHOWN = 100_000;

const isText = (type: string) => /^text\/|^application\/(json|xml|x-ndjson)\b|\+(json|xml)\b/.test(type);

/** The file's bytes through the client (`GET /v1/file/{id}`, decrypted on a secure session) as a Blob of its type. */
async function bytesOf(client: OdbRestClient, object: SerializedObject): Promise<Blob> {
  const answer = await client.downloadFile(object['~ObjectID']);
  const blob = await new Response(answer.stream).blob();
  return new Blob([blob], { type: String(object.ContentType) });
}

/**
 * A file object's bytes in its panel: Download (saved under its `Name` through a blob: link), and a
 * preview of an image or a text. A PDF is not shown: that needs `object-src` (or a frame) for a
 * blob: URL, and the studio's CSP keeps `object-src 'none'`.
 */
export function FileView({ client, object }: { client: OdbRestClient; object: SerializedObject }) {
  const type = String(object.ContentType);
  const size = Number(object.Size ?? 0);
  const name = String(object.Name ?? object['~ObjectID']);
  const image = useSignal<string | undefined>(undefined);
  const text = useSignal<string | undefined>(undefined);
  const error = useSignal('');
  const previewable = (type.startsWith('image/') && size <= IMAGE_LIMIT) || (isText(type) && size <= TEXT_LIMIT);

  useEffect(() => {
    if (!previewable) return;
    let url: string | undefined;
    let current = true;
    bytesOf(client, object).then(
      async (blob) => {
        if (!current) return;
        if (type.startsWith('image/')) image.value = url = URL.createObjectURL(blob);
        else text.value = await blob.text();
      },
      (cause) => current && (error.value = failureText(cause)),
    );
    return () => {
      current = false;
      if (url) URL.revokeObjectURL(url);
    };
  }, [client, object['~ObjectID'], object['~StoreTime']]);

  const download = () =>
    bytesOf(client, object).then(
      (blob) => saveBlob(blob, name),
      (cause) => (error.value = failureText(cause)),
    );

  const shown = text.value !== undefined && text.value.length > TEXT_SHOWN ? text.value.slice(0, TEXT_SHOWN) : text.value;
  return (
    <section class="file-view">
      <h3>{t('file')}</h3>
      <button type="button" onClick={() => void download()}>
        {t('downloadFile', { name })}
      </button>
      {error.value && (
        <p class="error" role="alert">
          {error.value}
        </p>
      )}
      {image.value && <img class="file-preview" src={image.value} alt={t('previewOf', { name })} />}
      {shown !== undefined && (
        <pre class="file-preview" tabIndex={0} aria-label={t('previewOf', { name })}>
          {shown}
          {shown.length < text.value!.length ? `\n${t('clipped', { size: (text.value!.length - shown.length).toLocaleString() })}` : ''}
        </pre>
      )}
      {!previewable && <p class="hint">{type === 'application/pdf' ? t('noPdfPreview') : t('noPreview', { type })}</p>}
    </section>
  );
}
