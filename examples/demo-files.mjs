// The demo's files (PROTOCOL.md 6.6): objects of the `Document` class in demo-data.json (written by
// make-demo-data.mjs) whose bytes demo-service.mjs puts into the blob store at start.
export const demoFiles = [
  { id: 'DOC00001', name: 'welcome.txt', contentType: 'text/plain; charset=utf-8', text: 'Welcome to the odbrest demo.\nUpload your own files with GET, POST and PATCH /v1/uploadFile.\n' },
  { id: 'DOC00002', name: 'Preisliste 2026 – Übersicht.csv', contentType: 'text/csv; charset=utf-8', text: 'Artikel;Preis\nBeratung;120,00\nWartung;80,00\n' },
  { id: 'DOC00003', name: 'logo.svg', contentType: 'image/svg+xml', text: '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><circle cx="32" cy="32" r="30" fill="#2a6"/></svg>\n' },
];
