import { post, type ApiResponse } from './api.js';

/**
 * A browser as the server sees it: it keeps the session cookie it is given and sends it back, and its
 * calls come from the server's own origin (Origin and Sec-Fetch-Site headers), as fetch in the web app would.
 */
export interface Browser {
  cookie: string | undefined;
  post<T = any>(path: string, body: unknown, headers?: Record<string, string>): Promise<ApiResponse<T>>;
}

export function createBrowser(baseUrl: string, origin = baseUrl): Browser {
  const browser: Browser = {
    cookie: undefined,
    async post(path, body, headers = {}) {
      const sent: Record<string, string> = { Origin: origin, 'Sec-Fetch-Site': 'same-origin', ...headers };
      if (browser.cookie) sent.Cookie = browser.cookie;
      const response = await post(baseUrl, path, body, { headers: sent });
      for (const setCookie of response.headers.getSetCookie()) {
        const [pair = '', ...attributes] = setCookie.split(';');
        const expired = attributes.some((a) => a.trim().toLowerCase() === 'max-age=0');
        browser.cookie = expired ? undefined : pair.trim();
      }
      return response;
    },
  };
  return browser;
}
