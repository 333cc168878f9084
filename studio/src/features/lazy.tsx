import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import type { ComponentType } from 'preact';
import { t } from '../i18n/index.js';

/**
 * A component whose code loads on first use (a chunk of its own): the first screen stays small, and
 * the writes, recycle bin and other tools come when a person opens them.
 */
export function lazy<P extends object>(load: () => Promise<ComponentType<P>>): ComponentType<P> {
  let loaded: ComponentType<P> | undefined;
  let loading: Promise<ComponentType<P>> | undefined;
  return function Lazy(props: P) {
    const ready = useSignal<ComponentType<P> | undefined>(loaded);
    useEffect(() => {
      if (ready.value) return;
      void (loading ??= load()).then((component) => (ready.value = loaded = component));
    }, []);
    const Component = ready.value;
    return Component ? <Component {...props} /> : <p aria-busy="true">{t('loading')}</p>;
  };
}
