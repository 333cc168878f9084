// The other process of events.bench's "over HTTP" memory rows: opens the streams it is sent (path and
// session id each) on the server at port argv[2], 50 at a time, reads whatever comes, and answers
// 'open' once every stream has answered its head.
import { Agent, request } from 'node:http';

const [port, appkey] = process.argv.slice(2);
const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
process.once('message', async ({ streams }) => {
  let next = 0;
  let open = 0;
  await new Promise((resolve, reject) => {
    const openNext = () => {
      if (next >= streams.length) return;
      const [path, sessionId] = streams[next++];
      request({ host: '127.0.0.1', port, path, headers: { appkey, sessionId }, agent }, (response) => {
        if (response.statusCode !== 200) reject(new Error(`events answered ${response.statusCode}`));
        response.resume();
        if (++open === streams.length) resolve();
        else openNext();
      })
        .once('error', reject)
        .end();
    };
    for (let i = 0; i < 50; i++) openNext();
  }).catch((error) => console.error(error.message));
  process.send('open');
});
