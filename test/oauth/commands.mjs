// The child side of the local providers' control channel (provider-process.mjs,
// oidc-provider-process.mjs): each IPC message `{id, cmd, args}` runs `commands[cmd](args)` and is
// answered `{id, result}` or `{id, error}`; the process ends with its parent's channel, and says
// `{ready: true}` once it listens for commands.
export function serveCommands(commands) {
  process.on('message', async ({ id, cmd, args }) => {
    try {
      process.send({ id, result: (await commands[cmd](args ?? {})) ?? null });
    } catch (error) {
      process.send({ id, error: error instanceof Error ? error.stack : String(error) });
    }
  });
  process.on('disconnect', () => process.exit(0));
  process.send({ ready: true });
}
