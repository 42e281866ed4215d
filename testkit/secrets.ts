// The secrets every Parley a test or benchmark starts runs with (in process or as a node process), so a
// client, a token or a signature made here fits any of them.
export const SECRETS = {
  CHAT_JWT_SECRET: 'test-jwt-secret-of-sufficient-length',
  CHAT_SERVER_KEY: 'test-server-key',
  BROADCAST_APP_ID: '1234',
  BROADCAST_APP_KEY: 'test-app-key',
  BROADCAST_APP_SECRET: 'test-app-secret',
} as const;
