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
  authorize: async (context, { action, className, object }) => {
    if (className !== 'ContactPerson' || action !== 'read' || !object) return true; // the class rules decide
    const session = context.session;
    if (!session) return false;
    if (object.id === session.principalId) return true;
    if (session.principal !== 'db') return false;
    const employee = (await context.user())?.fields.Employee;
    if (!employee || typeof employee !== 'object' || typeof employee.$ref !== 'string') return false;
    const contact = (await context.store.get(employee.$ref))?.fields.Mitarbeiteransprechpartner;
    return Boolean(contact && typeof contact === 'object' && contact.$ref === object.id);
  },
};
