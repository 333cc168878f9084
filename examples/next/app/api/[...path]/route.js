// odbrest under /api: this catch-all route hands every request below /api to the service.
import { createRouteHandlers } from 'odbrest/next';
import { createDemoService } from '../../../../demo-service.mjs';

const service = createDemoService(process.env, { basePath: '/api' });

export const dynamic = 'force-dynamic';
export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = createRouteHandlers(service);
