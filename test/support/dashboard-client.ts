/**
 * A browser stand-in for the dashboard API: a cookie jar (what the server sets is sent back on
 * later requests, as a browser on the dashboard's origin would), the Origin header a browser
 * sends, and the CSRF double submit (the `herald_csrf` cookie echoed in X-CSRF-Token). A body is
 * sent as JSON, or as multipart/form-data when it is a FormData.
 */
export interface DashboardResponse {
  status: number;
  headers: Headers;
  body: any;
  /** The raw Set-Cookie lines of this response. */
  setCookies: string[];
}

export class DashboardClient {
  readonly cookies = new Map<string, string>();
  csrf = true;

  constructor(readonly url: string) {}

  async request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<DashboardResponse> {
    const all: Record<string, string> = { origin: this.url, ...headers };
    if (this.cookies.size) all['cookie'] = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const form = body instanceof FormData;
    if (body !== undefined && !form) all['content-type'] = 'application/json';
    if (this.csrf && method !== 'GET' && this.cookies.has('herald_csrf') && !('x-csrf-token' in headers))
      all['x-csrf-token'] = this.cookies.get('herald_csrf')!;
    const response = await fetch(`${this.url}${path}`, {
      method,
      headers: all,
      body: body === undefined ? undefined : form ? body : JSON.stringify(body),
      redirect: 'manual',
    });
    const setCookies = response.headers.getSetCookie();
    for (const line of setCookies) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === '';
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, headers: response.headers, body: parsed, setCookies };
  }

  get = (path: string, headers?: Record<string, string>) => this.request('GET', path, undefined, headers);
  post = (path: string, body: unknown = {}, headers?: Record<string, string>) => this.request('POST', path, body, headers);
  patch = (path: string, body: unknown, headers?: Record<string, string>) => this.request('PATCH', path, body, headers);
  delete = (path: string, headers?: Record<string, string>) => this.request('DELETE', path, undefined, headers);

  /** Fetches the CSRF token (and its cookie), as the SPA does at start. */
  async start(): Promise<this> {
    const response = await this.get('/dashboard/api/csrf');
    if (response.status !== 200) throw new Error(`GET /dashboard/api/csrf answered ${response.status}`);
    return this;
  }

  auth(path: string, body: unknown = {}): Promise<DashboardResponse> {
    return this.post(`/dashboard/api/auth${path}`, body);
  }
}
