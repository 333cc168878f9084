import { useSignal } from '@preact/signals';
import { useRef } from 'preact/hooks';
import type { OdbRestClient, SerializedObject } from 'odbrest/client';
import { config } from '../config.js';
import { failureText } from '../data.js';
import { t } from '../i18n/index.js';
import { notice, touch } from './notice.js';
import { Alert } from '../components/Alert.js';

export interface UploadProps {
  client: OdbRestClient;
  /** Replace this file object's bytes (`replaceOID`) instead of creating a file object. */
  replaceOID?: string;
  /** The file object the upload made or changed. */
  onDone(object: SerializedObject): void;
}

/**
 * An upload (PROTOCOL.md 6.6) through the client's `uploadFile`, with a progress bar fed by its
 * `onProgress`: a new file object, or new bytes for one. The bytes go through the session's own
 * transport, encrypted end to end on a secure session. A file larger than the service takes is
 * refused here, before any byte is sent.
 */
export function Upload({ client, replaceOID, onDone }: UploadProps) {
  const input = useRef<HTMLInputElement>(null);
  const chosen = useSignal<File | undefined>(undefined);
  const progress = useSignal<{ loaded: number; total: number } | undefined>(undefined);
  const error = useSignal('');
  const busy = progress.value !== undefined;

  const send = async (event: Event) => {
    event.preventDefault();
    const file = chosen.value;
    if (!file || busy) return;
    error.value = '';
    if (file.size > config.maxUploadBytes) {
      error.value = t('uploadTooLarge', { name: file.name, size: file.size.toLocaleString(), max: config.maxUploadBytes.toLocaleString() });
      return;
    }
    progress.value = { loaded: 0, total: file.size };
    try {
      const object = await client.uploadFile(file, { ...(replaceOID ? { replaceOID } : {}), onProgress: (now) => (progress.value = now) });
      notice.value = { text: t('uploaded', { name: String(object.Name ?? file.name), size: Number(object.Size ?? file.size).toLocaleString() }) };
      chosen.value = undefined;
      if (input.current) input.current.value = '';
      touch();
      onDone(object);
    } catch (cause) {
      error.value = failureText(cause);
    } finally {
      progress.value = undefined;
    }
  };

  const now = progress.value;
  const percent = now ? (now.total === 0 ? 100 : Math.floor((now.loaded / now.total) * 100)) : 0;
  const name = chosen.value?.name ?? '';
  return (
    <form class="upload" onSubmit={(event) => void send(event)} aria-label={replaceOID ? t('replaceFile') : t('uploadFile')}>
      <label>
        <span>{replaceOID ? t('replaceFile') : t('uploadFile')}</span>
        <input
          ref={input}
          type="file"
          name="file"
          aria-label={t('chooseFile')}
          disabled={busy}
          onChange={(event) => ((chosen.value = (event.currentTarget as HTMLInputElement).files?.[0]), (error.value = ''))}
        />
      </label>
      <button type="submit" class="primary" disabled={!chosen.value || busy}>
        {t('uploadStart')}
      </button>
      {now && (
        <span class="upload-progress">
          <progress max={now.total || 1} value={now.total === 0 ? 1 : now.loaded} aria-label={t('uploadProgress', { name })} />
          <span aria-live="polite">{t('uploading', { name, percent })}</span>
        </span>
      )}
      <Alert text={error.value} />
    </form>
  );
}
