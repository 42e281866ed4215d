// Request validation. Query strings and path parameters arrive as text, so they are coerced to the schema's
// types; JSON bodies are not: `{"user_id": true}` or `{"body": 5}` is a 422, not user 1 or "5".
import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

function ajv(options: Options): Ajv {
  const instance = new Ajv({ removeAdditional: true, useDefaults: true, allErrors: true, ...options });
  addFormats.default(instance);
  return instance;
}

export function validatorCompiler(): FastifySchemaCompiler<object> {
  const forText = ajv({ coerceTypes: 'array' });
  const forJson = ajv({ coerceTypes: false });
  return ({ schema, httpPart }) => (httpPart === 'body' ? forJson : forText).compile(schema);
}
