/**
 * The HTTP server's routes in one sentence, as `serve --help`, its start-up line and a request for no route name
 * them: the help described only the first two REST routes after three more were added (s28 code 7).
 */
export const HTTP_ROUTES =
  "MCP is POST /mcp; REST is GET /search?q=…, GET /documents/<ref> (a read), GET /documents?repo=&prefix= (a listing), " +
  "GET /repositories and GET /status; GET /health needs no token";
