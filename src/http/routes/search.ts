// Message search (user token): GET /search/messages.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { SEARCH_QUERY_MAX_CHARS, searchMessages } from '../../chat/search.js';
import { SearchHit } from '../../contract/resources.js';
import type { HttpDeps } from '../deps.js';
import { Id, Limit, Paged, userErrors } from '../schemas.js';

const tags = ['search'];

export const searchRoutes: FastifyPluginAsyncTypebox<HttpDeps> = async (app, { chat }) => {
  app.get('/search/messages', {
    schema: {
      tags,
      summary: 'Search the caller’s conversations: every word of q as a word prefix, case- and accent-insensitive; newest first',
      querystring: Type.Object({
        // Checked by the use case (trimmed, at least one word, at most SEARCH_QUERY_MAX_CHARS characters), so
        // every refusal of q reads alike; the lengths here only tell the OpenAPI document.
        q: Type.Optional(Type.String({ description: `The words to find (1 to ${SEARCH_QUERY_MAX_CHARS} characters)` })),
        conversation_id: Type.Optional(Id),
        cursor: Type.Optional(Type.String({ maxLength: 100 })),
        limit: Limit(20),
      }),
      response: { 200: Paged(SearchHit), ...userErrors },
    },
  }, async (request) => {
    const page = await searchMessages(chat, request.actor, request.query);
    return { data: page.data, meta: { next_cursor: page.next_cursor } };
  });
};
