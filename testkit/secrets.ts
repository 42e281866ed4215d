// The secrets every Parley a test or benchmark starts runs with (in process or as a node process), so a
// client, a token or a signature made here fits any of them. Secrets have the 32 bytes Parley requires.
export const SECRETS = {
  CHAT_JWT_SECRET: 'test-jwt-secret-of-sufficient-length',
  CHAT_SERVER_KEY: 'test-server-key-of-sufficient-length',
  BROADCAST_APP_ID: '1234',
  BROADCAST_APP_KEY: 'test-app-key',
  BROADCAST_APP_SECRET: 'test-app-secret-of-sufficient-length',
} as const;
