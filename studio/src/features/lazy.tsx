import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import type { ComponentType } from 'preact';
import { t } from '../i18n/index.js';
import { Alert } from '../components/Alert.js';
import { failureText } from '../data.js';

/**
 * A component whose code loads on first use (a chunk of its own): the first screen stays small, and
 * the writes, recycle bin and other tools come when a person opens them.
 */
export function lazy<P extends object>(load: () => Promise<ComponentType<P>>): ComponentType<P> {
  let loaded: ComponentType<P> | undefined;
  let loading: Promise<ComponentType<P>> | undefined;
  return function Lazy(props: P) {
    const ready = useSignal<ComponentType<P> | undefined>(loaded);
    const failed = useSignal('');
    useEffect(() => {
      if (ready.value) return;
      (loading ??= load()).then(
        (component) => (ready.value = loaded = component),
        (cause) => {
          loading = undefined; // the next use tries again (the chunk may be back)
          failed.value = failureText(cause);
        },
      );
    }, []);
    const Component = ready.value;
    if (Component) return <Component {...props} />;
    return failed.value ? <Alert text={failed.value} /> : <p aria-busy="true">{t('loading')}</p>;
  };
}
