// Writes examples/demo-data.json: the demo database (deterministic, so the file is reviewable).
// Run: node examples/make-demo-data.mjs
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { demoFiles } from './demo-files.mjs';

const objects = [];
const add = (className, id, fields) => objects.push({ '~ClassName': className, '~ObjectID': id, ...fields });

add('UserGroup', 'GRP00001', { Name: 'admins', Description: 'Administrators' });
add('UserGroup', 'GRP00002', { Name: 'sales', Description: 'Sales team' });
add('UserGroup', 'GRP00003', { Name: 'support', Description: 'Customer support' });

// Pictures hold only internal fields, so they serialize as metadata (the seed's `Bild`).
for (let i = 1; i <= 4; i++) add('Bild', `IMG0000${i}`, { _mimeType: 'image/png', _file: `portrait-${i}.png` });

// Contact persons: they log in through /v1/auth/df with their own password.
add('ContactPerson', 'CON00001', { Name: 'carol', Name1: 'Carol', Name2: 'Meyer', Name3: 'Front office', Bild: { $ref: 'IMG00003' }, _password: 'carol-secret', _licences: ['crm'] });
add('ContactPerson', 'CON00002', { Name: 'dan', Name1: 'Dan', Name2: 'Krause', Name3: 'Back office', Bild: { $ref: 'IMG00004' }, _password: 'dan-secret', _licences: [] });

add('Employee', 'EMP00001', { Name1: 'Alice', Name2: 'Schmidt', Name3: 'Head of sales', Bild: { $ref: 'IMG00001' }, Mitarbeiteransprechpartner: { $ref: 'CON00001' } });
add('Employee', 'EMP00002', { Name1: 'Bob', Name2: 'Weber', Name3: 'Support engineer', Bild: { $ref: 'IMG00002' }, Mitarbeiteransprechpartner: { $ref: 'CON00002' } });
add('Employee', 'EMP00003', { Name1: 'Erin', Name2: 'Wagner', Name3: 'Integration account', Bild: null, Mitarbeiteransprechpartner: null });

// `hr` has an optional two-factor policy in the demo server; bob holds `shop` with one seat (one live session at a time).
add('User', 'USR00001', { Name: 'alice', Description: 'Alice Schmidt', Groups: { $set: ['GRP00001', 'GRP00002'] }, Employee: { $ref: 'EMP00001' }, _password: 'alice-secret', _licences: ['crm', 'shop', 'hr'] });
add('User', 'USR00002', { Name: 'bob', Description: 'Bob Weber', Groups: { $set: ['GRP00003'] }, Employee: { $ref: 'EMP00002' }, _password: 'bob-secret', _licences: ['crm', 'hr', { app: 'shop', parallel: 1 }] });
add('User', 'USR00003', { Name: 'dave', Description: 'No licences: may only run macros', Groups: { $set: [] }, Employee: null, _password: 'dave-secret', _licences: [] });
add('User', 'USR00004', { Name: 'extern', Description: 'Shared service user for external logins', Groups: { $set: ['GRP00003'] }, Employee: { $ref: 'EMP00003' }, _password: 'extern-secret', _licences: ['crm'] });

// A few hundred customers for listings, each with an account manager.
const cities = ['Berlin', 'Hamburg', 'Munich', 'Cologne', 'Vienna', 'Zurich'];
const first = ['Anna', 'Ben', 'Clara', 'David', 'Eva', 'Felix', 'Greta', 'Hugo', 'Ida', 'Jonas'];
const last = ['Bauer', 'Fischer', 'Hoffmann', 'Koch', 'Lange', 'Neumann', 'Richter', 'Schulz', 'Vogel', 'Wolf'];
for (let i = 1; i <= 300; i++) {
  add('Customer', `CUS${String(i).padStart(5, '0')}`, {
    Name: `${first[i % 10]} ${last[Math.floor(i / 10) % 10]}`,
    Number: i,
    City: cities[i % cities.length],
    Active: i % 7 !== 0,
    Revenue: (i * 1373) % 100000,
    AccountManager: { $ref: i % 2 ? 'EMP00001' : 'EMP00002' },
  });
}

// Files: the `Document` class; demo-service.mjs puts their bytes into the blob store.
for (const file of demoFiles) {
  const bytes = Buffer.from(file.text, 'utf8');
  add('Document', file.id, { Name: file.name, Size: bytes.length, ContentType: file.contentType, Sha256: createHash('sha256').update(bytes).digest('hex') });
}

writeFileSync(new URL('./demo-data.json', import.meta.url), `${JSON.stringify({ objects }, null, 1)}\n`);
console.log(`wrote ${objects.length} objects`);
