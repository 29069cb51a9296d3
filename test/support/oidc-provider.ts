import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export interface OidcUser {
  sub: string;
  email: string;
  email_verified: boolean;
  name: string;
}

/** oauth2-mock-server as Google, in a child process (oidc-provider.child.mjs says why). */
export class OidcProvider {
  private constructor(
    private readonly child: ChildProcess,
    readonly issuer: string,
  ) {}

  static async start(): Promise<OidcProvider> {
    const child = fork(join(__dirname, 'oidc-provider.child.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const issuer = await new Promise<string>((resolve, reject) => {
      child.once('message', (message: { issuer: string }) => resolve(message.issuer));
      child.once('exit', (code) => reject(new Error(`OIDC provider exited with ${code}`)));
    });
    return new OidcProvider(child, issuer);
  }

  get discoveryUrl(): string {
    return `${this.issuer}/.well-known/openid-configuration`;
  }

  private tell(message: object): Promise<void> {
    return new Promise((resolve) => {
      this.child.once('message', () => resolve());
      this.child.send(message);
    });
  }

  signInAs = (user: OidcUser | null) => this.tell({ user });
  denyConsent = (deny: boolean) => this.tell({ deny });

  async stop(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.disconnect();
    await exited;
  }
}
