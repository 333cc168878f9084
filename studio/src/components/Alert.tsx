/** A failure told to the person: shown, and said at once by screen readers (`role="alert"`); nothing when there is none. */
export function Alert({ text }: { text: string }) {
  return text ? (
    <p class="error" role="alert">
      {text}
    </p>
  ) : null;
}
