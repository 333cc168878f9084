// The demo's access rules (PROTOCOL.md 6.4): everyone reads customers, `sales` creates and changes
// them, `admins` delete them; users (and custom-login contacts) still see only themselves (the default).
// Files (`Document`, PROTOCOL.md 6.6): every session reads and uploads them; only `admins` replace
// a file's bytes (`replaceOID`, the update right) or delete one (which deletes its bytes too).
// `sales` also sets customers' per-object security (PROTOCOL.md 6.7).
// alice (admins, sales) writes customers and files; bob (support) reads customers and uploads files.
// Contact persons (`ContactPerson`, the custom-login class): each sees itself, and a user reads the
// contact person its own employee names (`Employee.Mitarbeiteransprechpartner`, shown in full in the
// login answer as the spec's example shows it); no one reads the others.
export const demoAccess = {
  rules: {
    Customer: { read: ['*'], create: ['sales'], update: ['sales'], delete: ['admins'], security: ['sales'] },
    Document: { read: ['*'], create: ['*'], update: ['admins'], delete: ['admins'] },
    ContactPerson: { read: ['*'] },
    // the product's client lists `Dokument` in its first example (PROTOCOL.md 6.2): a class of the
    // product's database that has no objects here; named in the rules, it is a class (the empty set)
    Dokument: { read: ['*'] },
  },
  // authorize decides contact persons only: every other class keeps the listings' fast path
  authorizeClasses: ['ContactPerson'],
  // answered at once (not `async`) where the store has the objects at hand, so those reads never wait for it
  authorize: (context, { action, className, object }) => className !== 'ContactPerson' || action !== 'read' || !object || readsContact(context, object),
};

/**
 * Whether the session may read this contact person: its own, or the one its user's employee names.
 * The two objects it reads come without a promise where the store has them at hand (`getNow`, the
 * memory store's), so a read that reaches a contact person waits for nothing either.
 */
function readsContact(context, object) {
  const session = context.session;
  if (!session) return false;
  if (object.id === session.principalId) return true;
  if (session.principal !== 'db') return false;
  return read(context.store, session.principalId, (user) => {
    const employee = user?.fields.Employee;
    if (!employee || typeof employee !== 'object' || typeof employee.$ref !== 'string') return false;
    return read(context.store, employee.$ref, (found) => {
      const contact = found?.fields.Mitarbeiteransprechpartner;
      return Boolean(contact && typeof contact === 'object' && contact.$ref === object.id);
    });
  });
}

/** `next(the object with this id)`, at once where the store has it at hand, else once it is read. */
function read(store, id, next) {
  const found = store.getNow ? store.getNow(id) : store.get(id);
  return found instanceof Promise ? found.then(next) : next(found);
}
