import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import type { OdbRestClient, SerializedObject } from 'odbrest/client';
import { failureText } from '../data.js';
import { t } from '../i18n/index.js';
import { saveBlob } from './save.js';
import { Alert } from '../components/Alert.js';

/** Previews read at most this much: an image or a PDF up to 10 MB, a text up to 1 MB (its first 100,000 characters shown). */
const IMAGE_LIMIT = 10 * 1024 * 1024;
const TEXT_LIMIT = 1024 * 1024;
const TEXT_SHOWN = 100_000;

const PDF = 'application/pdf';
const isPdf = (type: string) => type.split(';', 1)[0]!.trim().toLowerCase() === PDF;
const isText = (type: string) => /^text\/|^application\/(json|xml|x-ndjson)\b|\+(json|xml)\b/.test(type);

/** The file's bytes through the client (`GET /v1/file/{id}`, decrypted on a secure session) as a Blob of `type` (default: its stored type). */
async function bytesOf(client: OdbRestClient, object: SerializedObject, type = String(object.ContentType)): Promise<Blob> {
  const answer = await client.downloadFile(object['~ObjectID']);
  const blob = await new Response(answer.stream).blob();
  return new Blob([blob], { type });
}

/**
 * A file object's bytes in its panel: Download (saved under its `Name` through a blob: link), and a
 * preview of an image, a text or a PDF. A PDF is shown in a frame of a blob: URL (the CSP's
 * `frame-src blob:`) whose type is set here to application/pdf, never the stored one: only a file
 * stored as a PDF is framed, and the frame gets the browser's PDF viewer whatever the bytes hold,
 * never a document of the studio's origin (a text/html blob is never made, let alone framed).
 */
export function FileView({ client, object }: { client: OdbRestClient; object: SerializedObject }) {
  const type = String(object.ContentType);
  const size = Number(object.Size ?? 0);
  const name = String(object.Name ?? object['~ObjectID']);
  const image = useSignal<string | undefined>(undefined);
  const pdf = useSignal<string | undefined>(undefined);
  const text = useSignal<string | undefined>(undefined);
  const error = useSignal('');
  const previewable = ((type.startsWith('image/') || isPdf(type)) && size <= IMAGE_LIMIT) || (isText(type) && size <= TEXT_LIMIT);

  useEffect(() => {
    if (!previewable) return;
    let url: string | undefined;
    let current = true;
    bytesOf(client, object, isPdf(type) ? PDF : type).then(
      async (blob) => {
        if (!current) return;
        if (isPdf(type)) pdf.value = url = URL.createObjectURL(blob);
        else if (type.startsWith('image/')) image.value = url = URL.createObjectURL(blob);
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
      <Alert text={error.value} />
      {image.value && <img class="file-preview" src={image.value} alt={t('previewOf', { name })} />}
      {pdf.value && <iframe class="file-preview pdf-preview" src={pdf.value} title={t('previewOf', { name })} />}
      {shown !== undefined && (
        <pre class="file-preview" tabIndex={0} aria-label={t('previewOf', { name })}>
          {shown}
          {shown.length < text.value!.length ? `\n${t('clipped', { size: (text.value!.length - shown.length).toLocaleString() })}` : ''}
        </pre>
      )}
      {!previewable && <p class="hint">{t('noPreview', { type })}</p>}
    </section>
  );
}
