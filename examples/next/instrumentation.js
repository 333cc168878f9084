// Runs once when the Next server starts: lets odbrest see each request's connection address, which
// Next does not pass to route handlers (used by the failed-login limit).
export async function register() {
  if (process.env.NEXT_RUNTIME === 'nodejs') (await import('odbrest/next/instrumentation')).trackClientAddress();
}
