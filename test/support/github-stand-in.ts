import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GithubAccount {
  id: number;
  login: string;
  name: string;
  emails: { email: string; primary: boolean; verified: boolean }[];
}

/**
 * A local stand-in for github.com's OAuth endpoints and api.github.com's /user and /user/emails:
 * `next` is the account the next authorization signs in as; `deny` makes the next one a refused
 * consent (`error=access_denied`), as GitHub redirects when the user clicks Cancel.
 */
export class GithubStandIn {
  next: GithubAccount | null = null;
  deny = false;
  private readonly codes = new Map<string, GithubAccount>();
  private readonly tokens = new Map<string, GithubAccount>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<GithubStandIn> {
    let self: GithubStandIn | null = null;
    const server = createServer((req, res) => void self!.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    self = new GithubStandIn(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return self;
  }

  config(): Record<string, string> {
    return {
      GITHUB_CLIENT_ID: 'herald-test-client',
      GITHUB_CLIENT_SECRET: 'herald-test-secret',
      GITHUB_AUTHORIZE_URL: `${this.url}/login/oauth/authorize`,
      GITHUB_TOKEN_URL: `${this.url}/login/oauth/access_token`,
      GITHUB_API_URL: `${this.url}/api`,
    };
  }

  private async handle(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): Promise<void> {
    const url = new URL(req.url!, this.url);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === '/login/oauth/authorize') {
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      if (this.deny || !this.next) {
        this.deny = false;
        back.searchParams.set('error', 'access_denied');
        back.searchParams.set('error_description', 'The user has denied your application access.');
      } else {
        const code = `code-${Math.random().toString(36).slice(2)}`;
        this.codes.set(code, this.next);
        back.searchParams.set('code', code);
      }
      res.writeHead(302, { location: back.href });
      res.end();
      return;
    }
    if (url.pathname === '/login/oauth/access_token' && req.method === 'POST') {
      let body = '';
      for await (const chunk of req) body += chunk;
      const params = new URLSearchParams(body);
      const account = this.codes.get(params.get('code') ?? '');
      if (!account) return json(200, { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
      this.codes.delete(params.get('code')!);
      const token = `gho_${Math.random().toString(36).slice(2)}`;
      this.tokens.set(token, account);
      return json(200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
    }
    const account = this.tokens.get((req.headers.authorization ?? '').replace(/^Bearer /i, ''));
    if (!account) return json(401, { message: 'Bad credentials' });
    if (url.pathname === '/api/user') return json(200, { id: account.id, login: account.login, name: account.name, email: null, avatar_url: null });
    if (url.pathname === '/api/user/emails')
      return json(
        200,
        account.emails.map((e) => ({ ...e, visibility: null })),
      );
    json(404, { message: 'Not Found' });
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
