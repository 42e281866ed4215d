// Request and response schemas shared by the routes. Resources themselves live with the public API's definitions (src/contract/resources.ts).
import { Type, type TSchema } from 'typebox';
import { PageMeta } from '../contract/resources.js';

export const Id = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
export const IdParams = Type.Object({ id: Id });
export const Limit = (fallback: number) => Type.Integer({ minimum: 1, maximum: 100, default: fallback });

export const ErrorBody = Type.Object({
  message: Type.String(),
  code: Type.String(),
  errors: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
});

export const Data = <T extends TSchema>(schema: T) => Type.Object({ data: schema });
export const Paged = <T extends TSchema>(schema: T) =>
  Type.Object({ data: Type.Array(schema), meta: PageMeta });

/** The error responses every user route may answer with, for the OpenAPI document. */
export const userErrors = { 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody, 429: ErrorBody };
