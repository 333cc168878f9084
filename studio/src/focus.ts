import { useEffect, useRef } from 'preact/hooks';
import type { RefObject } from 'preact';

/**
 * Where the keyboard's focus goes when a form or a panel opens and closes, so it never falls to the
 * page's body: into the form's first field once its fields are there, and back to the element that
 * opened it when it closes. That element is often drawn anew meanwhile (Edit is not shown while its
 * form is open): then the button of the same text in the same screen or panel takes the focus.
 */

/** The element that had the focus last, and where it was: a button removed by the click it got (Edit, New class) leaves the focus on the body, not in this. */
interface Focused {
  element: HTMLElement;
  area: Element | null;
  text: string | null;
  tag: string;
}
let last: Focused | undefined;
document.addEventListener('focusin', (event) => {
  const element = event.target;
  if (element instanceof HTMLElement) last = { element, area: element.closest('.panel, section'), text: element.textContent, tag: element.tagName.toLowerCase() };
});

/** The element focused now (or last, when the focus fell to the body) and how to find it again once it has been drawn anew. */
function opener(): () => HTMLElement | undefined {
  const active = document.activeElement;
  // the focused element; or, on the body, the last one only when it went away (removed or disabled by its own click), not one left on purpose (Esc out of a box)
  const gone = last && last.tag === 'button' && (!last.element.isConnected || (last.element as HTMLButtonElement).disabled);
  const now = active && active !== document.body ? (last?.element === active ? last : undefined) : gone ? last : undefined;
  if (!now) return () => undefined;
  return () => {
    if (now.element.isConnected) return now.element;
    if (!now.text || (now.tag !== 'button' && now.tag !== 'a')) return undefined; // only a button or link is found again by its text
    const scope = now.area?.isConnected ? now.area : document;
    return [...scope.querySelectorAll<HTMLElement>(now.tag)].find((candidate) => candidate.textContent === now.text);
  };
}

/** Puts the focus back on what opened the component (a button, a row's link) when it goes. */
export function useReturnFocus(): void {
  const back = useRef<(() => HTMLElement | undefined) | undefined>(undefined);
  back.current ??= opener();
  useEffect(
    () => () => {
      const find = back.current!;
      // after the render that removed it, when the opener is drawn again
      setTimeout(() => {
        if (document.activeElement && document.activeElement !== document.body && document.activeElement.isConnected) return;
        find()?.focus();
      });
    },
    [],
  );
}

/** A form: its first field takes the focus once `ready` (its fields drawn); closed, the focus goes back to what opened it. */
export function useFormFocus(form: RefObject<HTMLElement | null>, ready: boolean): void {
  useReturnFocus();
  useEffect(() => {
    if (ready) form.current?.querySelector<HTMLElement>('input:not([type=hidden]):not([disabled]), select:not([disabled]), textarea:not([disabled])')?.focus();
  }, [ready]);
}
