import { pino, type Logger } from 'pino';

export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'parley' }, redact: ['req.headers.authorization', 'req.headers["x-chat-server-key"]'] });
}
