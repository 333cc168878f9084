// One of the app's own routes, next to the API.
export const dynamic = 'force-dynamic';

export function GET() {
  return Response.json({ app: 'next', message: 'hello from the app' });
}
