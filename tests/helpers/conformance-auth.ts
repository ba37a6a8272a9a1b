/**
 * Preloaded into the MCP conformance suite (`bun --preload`): every fetch it makes to
 * AGENT_SHELL_TEST_URL's origin carries `Authorization: Bearer $AGENT_SHELL_TEST_TOKEN`, as a
 * configured client's would, so the suite's SDK client runs directly against
 * `agent-shell mcp --http`. (Its raw undici requests, used by dns-rebinding-protection only,
 * go through Bun's built-in undici, which this cannot reach: docs/harnesses.md says what that means.)
 */
const target = new URL(process.env.AGENT_SHELL_TEST_URL!).origin;
const authorization = `Bearer ${process.env.AGENT_SHELL_TEST_TOKEN}`;

const fetchWithoutToken = globalThis.fetch;
globalThis.fetch = Object.assign(
  (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : input);
    if (url.origin !== target) return fetchWithoutToken(input, init);
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    if (!headers.has("authorization")) headers.set("authorization", authorization);
    return fetchWithoutToken(input, { ...init, headers });
  },
  { preconnect: fetchWithoutToken.preconnect },
) as typeof fetch;
