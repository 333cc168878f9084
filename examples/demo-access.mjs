// The demo's access rules (PROTOCOL.md 6.4): everyone reads customers, `sales` creates and changes
// them, `admins` delete them; users (and custom-login contacts) still see only themselves (the default).
// Files (`Document`, PROTOCOL.md 6.6): every session reads and uploads them; only `admins` replace
// a file's bytes (`replaceOID`, the update right) or delete one (which deletes its bytes too).
// `sales` also sets customers' per-object security (PROTOCOL.md 6.7).
// alice (admins, sales) writes customers and files; bob (support) reads customers and uploads files.
export const demoAccess = {
  rules: {
    Customer: { read: ['*'], create: ['sales'], update: ['sales'], delete: ['admins'], security: ['sales'] },
    Document: { read: ['*'], create: ['*'], update: ['admins'], delete: ['admins'] },
  },
};
