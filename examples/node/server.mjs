// The demo: odbrest on Node's http server with the demo database (examples/demo-data.json).
// Options come from api-config.yml or ODBREST_* variables (see the README); `npm start` runs this.
import { createService, clientPassValue } from 'odbrest';
import { loadConfig, serve } from 'odbrest/node';

const demoData = new URL('../demo-data.json', import.meta.url).pathname;
const config = loadConfig({ ODBREST_DATA: demoData, ODBREST_DATABASE_NAME: 'demo', ...process.env });
const service = createService(config.options);
await service.ready;
const server = await serve(service, { port: config.port, hostname: config.hostname });
const port = server.address().port;
const root = `http://localhost:${port}${config.options.basePath ?? ''}`;

console.log(`odbrest demo listening on ${root}`);
console.log('Log in as alice (password alice-secret; the client sends its hex MD5):');
console.log(
  `curl -s -X POST ${root}/v1/login -H 'appkey: demo' -H 'Content-Type: application/json' ` +
    `-d '{"user":"alice","pass":"${clientPassValue('alice-secret')}","appNames":["crm"]}'`,
);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));
