// The demo's access rules (PROTOCOL.md 6.4): everyone reads customers, `sales` creates and changes
// them, `admins` delete them; users (and custom-login contacts) still see only themselves (the default).
// alice (admins, sales) writes customers; bob (support) reads them only.
export const demoAccess = {
  rules: {
    Customer: { read: ['*'], create: ['sales'], update: ['sales'], delete: ['admins'] },
  },
};
