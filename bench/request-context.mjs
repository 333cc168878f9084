// Run by scaling.bench.mjs in a process of its own: in-memory GET /v1/object/{id} per second of CPU,
// 16 concurrent, each request inside an AsyncLocalStorage context (`context`) or not (`plain`). The
// context is what carries a session's position to the store (`ObjectStore.inSession`); once one is
// used, the runtime tracks every promise of the process, so the two are measured in separate processes.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createService } from '../dist/index.js';
import { demoData, loggedInGet } from './common.mjs';

const service = createService({ data: demoData(), users: { passwordIterations: 1000 } });
await service.ready;
const get = await loggedInGet(service);
const storage = new AsyncLocalStorage();
const fn = process.argv[2] === 'context' ? () => storage.run({}, get) : get;
const loop = async (until) => {
  while (performance.now() < until) await fn();
};
await Promise.all(Array.from({ length: 16 }, () => loop(performance.now() + 500)));
const cpu = process.cpuUsage();
let n = 0;
const end = performance.now() + 1500;
await Promise.all(Array.from({ length: 16 }, async () => {
  while (performance.now() < end) (await fn(), n++);
}));
const used = process.cpuUsage(cpu);
console.log(JSON.stringify({ perCpuSecond: (n * 1e6) / (used.user + used.system) }));
