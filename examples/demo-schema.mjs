// The demo's declared classes (PROTOCOL.md 6.8): writes to them are checked against these fields, the
// model routes (GET /v1/model/structure, POST /v2/model/structure) describe them, and
// `odbrest types` turns them into TypeScript types. `Bild` (the portraits) is left schemaless.
export const demoSchema = {
  Customer: {
    fields: {
      Name: { type: 'string', required: true, maxLength: 120 },
      Number: { type: 'integer', min: 1 },
      City: { type: 'string', maxLength: 80 },
      Active: 'boolean',
      Revenue: { type: 'number', min: 0 },
      AccountManager: { type: 'ref', class: 'Employee' },
    },
    indexes: ['Name', 'Number', 'City'],
  },
  Employee: {
    fields: {
      Name1: 'string',
      Name2: 'string',
      Name3: 'string',
      Bild: { type: 'ref', class: 'Bild' },
      Mitarbeiteransprechpartner: { type: 'ref', class: 'ContactPerson' },
    },
  },
  ContactPerson: {
    fields: { Name: { type: 'string', required: true }, Name1: 'string', Name2: 'string', Name3: 'string', Bild: { type: 'ref', class: 'Bild' } },
  },
  User: {
    fields: { Name: { type: 'string', required: true }, Description: 'string', Groups: { type: 'set', class: 'UserGroup' }, Employee: { type: 'ref', class: 'Employee' } },
  },
  UserGroup: { fields: { Name: { type: 'string', required: true }, Description: 'string' }, strict: true },
  Document: { fields: { Name: 'string', Size: { type: 'integer', min: 0 }, ContentType: 'string', Sha256: 'string' } },
};
