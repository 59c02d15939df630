/** A JSON POST to the API, as a client would send it. */
export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export async function post<T = any>(
  baseUrl: string,
  path: string,
  body: unknown,
  options: { key?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', ...options.headers };
  if (options.key) headers.Authorization = `Bearer ${options.key}`;
  const response = await fetch(`${baseUrl}${path}`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body: parsed as T };
}

/** execAgent with a bearer key. */
export function execAgent(baseUrl: string, key: string, body: Record<string, unknown>) {
  return post(baseUrl, '/api/exec/execAgent', body, { key });
}
