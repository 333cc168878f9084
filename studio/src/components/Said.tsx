/** What a form shows after it ran: a result or an error, announced. */
export type Outcome = { ok: boolean; text: string } | undefined;

/** An outcome said: a result as a status, an error as an alert (screen readers say both); nothing before the form ran. */
export function Said({ outcome }: { outcome: Outcome }) {
  if (!outcome) return null;
  return (
    <p class={outcome.ok ? 'hint' : 'error'} role={outcome.ok ? 'status' : 'alert'}>
      {outcome.text}
    </p>
  );
}
