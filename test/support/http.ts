/** A small client for the gateway's HTTP API, as an agent would call it. */
export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export function apiClient(baseUrl: string, apiKey?: string) {
  async function call<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
    const res = await fetch(baseUrl + path, {
      method,
      headers: {
        ...(apiKey !== undefined && { 'x-api-key': apiKey }),
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  }
  const terminal = new Set(['confirmed', 'reverted', 'failed']);
  return {
    get: <T = any>(path: string) => call<T>('GET', path),
    post: <T = any>(path: string, body: unknown, headers?: Record<string, string>) => call<T>('POST', path, body, headers),
    /** Polls GET /status/:id until a terminal status (the spec's client loop, faster for tests). */
    async waitForTerminal(id: string, timeoutMs = 30_000): Promise<any> {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const r = await call('GET', `/status/${id}`);
        if (r.status !== 200) throw new Error(`status ${id}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
        if (terminal.has(r.body.status)) return r.body;
        if (Date.now() > until) throw new Error(`status ${id} still ${r.body.status} after ${timeoutMs} ms`);
        await new Promise((res) => setTimeout(res, 25));
      }
    },
  };
}
export type TestApi = ReturnType<typeof apiClient>;
