import { Inject, Injectable, Logger } from '@nestjs/common';
import { AUTH_MODELS, PASSKEY_SCHEMA, TWO_FACTOR_SCHEMA } from './auth-schema';
import { githubFetchJson, oauthProviders } from './auth-providers';
import { DEVELOPMENT_AUTH_SECRET, PEOPLE_CONFIG, secureCookies, type PeopleConfig } from './people.config';
import { escapeHtml, PeopleService } from './people.service';
import { signUpExtras } from './people-input.validation';
import { SystemMailer } from './system-mailer.service';

/** Where better-auth is mounted on the api role (its basePath). */
export const AUTH_BASE_PATH = '/dashboard/api/auth';
/** The pg Pool better-auth's Kysely adapter uses (provided by PeopleModule). */
export const AUTH_DATABASE = Symbol('AUTH_DATABASE');
/** Set by the HTTP edge from the socket (Fastify's request.ip), never taken from the client. */
export const CLIENT_IP_HEADER = 'x-herald-client-ip';

export interface SessionUser {
  id: string;
  email: string;
  name: string;
  emailVerified: boolean;
  twoFactorEnabled?: boolean | null;
}

export interface DashboardSession {
  user: SessionUser;
  session: { id: string; userId: string; ipAddress?: string | null; userAgent?: string | null };
}

/** The part of a better-auth instance Herald calls. */
interface AuthInstance {
  handler(request: Request): Promise<Response>;
  api: {
    getSession(input: { headers: Headers }): Promise<DashboardSession | null>;
    signUpEmail(input: { body: { email: string; password: string; name: string } }): Promise<{ user: { id: string } }>;
  };
}

/**
 * better-auth for the dashboard: email and password (scrypt, verified addresses, reset links),
 * Google and GitHub with account linking by verified address, TOTP with backup codes, passkeys,
 * sessions in Postgres. Built once the api role knows its own URL (`start`), since links and
 * OAuth redirects need it. better-auth is ESM-only: it is loaded with import() (Node's
 * require(esm) after compilation to CommonJS).
 */
@Injectable()
export class DashboardAuth {
  private readonly logger = new Logger(DashboardAuth.name);
  private origin = '';
  private resolveAuth!: (auth: AuthInstance) => void;
  /** Requests that arrive between listen() and start() wait for it. */
  private readonly auth = new Promise<AuthInstance>((resolve) => (this.resolveAuth = resolve));

  constructor(
    @Inject(PEOPLE_CONFIG.token) private readonly config: PeopleConfig,
    @Inject(AUTH_DATABASE) private readonly database: unknown,
    private readonly people: PeopleService,
    private readonly mailer: SystemMailer,
  ) {}

  /** The dashboard's origin: DASHBOARD_URL, else PUBLIC_API_URL, else the URL the api role listens on. */
  get dashboardUrl(): string {
    return this.origin;
  }

  async start(listeningUrl: string): Promise<void> {
    this.origin = (this.config.DASHBOARD_URL ?? this.config.PUBLIC_API_URL ?? listeningUrl).replace(/\/+$/, '');
    const [{ betterAuth }, { twoFactor, genericOAuth }, { passkey }, { APIError }] = await Promise.all([
      import('better-auth'),
      import('better-auth/plugins'),
      import('@better-auth/passkey'),
      import('@better-auth/core/error'),
    ]);
    // A passkey signs in without the password and without the TOTP code, so it must be two factors
    // by itself: the authenticator holds the key and checked the person (PIN, fingerprint, face).
    // better-auth asks for that only as "preferred" and accepts an answer without it.
    const personNotVerified = () =>
      new APIError('UNAUTHORIZED', {
        code: 'PASSKEY_USER_NOT_VERIFIED',
        message:
          'The passkey did not check that it is you (no PIN, fingerprint or face), which Herald needs of a passkey. Use one that does, or another way to sign in.',
      });
    const config = this.config;
    const regions = config.HERALD_REGIONS;
    const people = this.people;
    const mailer = this.mailer;
    const origin = this.origin;
    const auth = betterAuth({
      appName: 'Herald',
      baseURL: origin,
      basePath: AUTH_BASE_PATH,
      secret: config.AUTH_SECRET ?? DEVELOPMENT_AUTH_SECRET,
      database: this.database as never,
      trustedOrigins: [origin],
      // Where an OAuth round trip that lost its own error URL ends (an expired state, a reloaded
      // callback): the sign-in page, which puts `?error=` in words, not better-auth's bare error page.
      onAPIError: { errorURL: `${origin}/dashboard/sign-in` },
      ...AUTH_MODELS,
      session: {
        ...AUTH_MODELS.session,
        expiresIn: config.SESSION_TTL_SECONDS,
        updateAge: Math.min(86400, Math.floor(config.SESSION_TTL_SECONDS / 2)),
      },
      account: { ...AUTH_MODELS.account, accountLinking: { enabled: true, allowDifferentEmails: false } },
      // Sign-in attempts are limited by SignInLimiter in Redis, shared by every api process.
      rateLimit: { enabled: false },
      telemetry: { enabled: false },
      logger: { disabled: config.LOG_LEVEL === 'silent', level: config.LOG_LEVEL === 'debug' || config.LOG_LEVEL === 'trace' ? 'debug' : 'warn' },
      advanced: {
        useSecureCookies: secureCookies(config),
        cookiePrefix: 'herald',
        defaultCookieAttributes: { httpOnly: true, sameSite: 'lax', path: '/' },
        ipAddress: { ipAddressHeaders: [CLIENT_IP_HEADER] },
      },
      emailAndPassword: {
        enabled: true,
        requireEmailVerification: true,
        minPasswordLength: 10,
        maxPasswordLength: 256,
        revokeSessionsOnPasswordReset: true,
        sendResetPassword: async ({ user, url }: { user: SessionUser; url: string }) => {
          await mailer.deliver(
            user.email,
            'Reset your Herald password',
            `Someone asked to reset the password of your Herald account.\n\nChoose a new password: ${url}\n\nIf it was not you, ignore this email; your password stays as it is.`,
            `<p>Someone asked to reset the password of your Herald account.</p><p><a href="${escapeHtml(url)}">Choose a new password</a></p><p>If it was not you, ignore this email; your password stays as it is.</p>`,
          );
        },
      },
      emailVerification: {
        sendOnSignUp: true,
        sendOnSignIn: true,
        autoSignInAfterVerification: false,
        sendVerificationEmail: async ({ user, url }: { user: SessionUser; url: string }) => {
          await mailer.deliver(
            user.email,
            'Confirm your email address for Herald',
            `Welcome to Herald. Confirm your address to sign in: ${url}`,
            `<p>Welcome to Herald.</p><p><a href="${escapeHtml(url)}">Confirm your address</a> to sign in.</p>`,
          );
        },
      },
      databaseHooks: {
        user: {
          create: {
            after: async (user: SessionUser, context: { body?: unknown } | null) => {
              const extras = signUpExtras(regions).safeParse(context?.body ?? {});
              await people.createFirstTeam(user, extras.success ? extras.data : {});
            },
          },
        },
        session: {
          create: {
            after: async (session: { userId: string; ipAddress?: string | null; userAgent?: string | null }, context: { path?: string } | null) => {
              const user = await people.user(session.userId);
              await people.record(
                { userId: session.userId, email: user?.email ?? '', ip: session.ipAddress ?? null, userAgent: session.userAgent ?? null },
                null,
                'user.signed_in',
                { method: signInMethod(context?.path) },
              );
            },
          },
        },
      },
      plugins: [
        twoFactor({ issuer: 'Herald', schema: TWO_FACTOR_SCHEMA }),
        passkey({
          rpID: new URL(origin).hostname,
          rpName: 'Herald',
          origin,
          schema: PASSKEY_SCHEMA,
          // Discoverable (the sign-in asks for no address) and verifying the person.
          authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
          registration: {
            afterVerification: ({ verification }: { verification: { registrationInfo?: { userVerified?: boolean } } }) => {
              if (!verification.registrationInfo?.userVerified) throw personNotVerified();
            },
          },
          authentication: {
            afterVerification: ({ verification }: { verification: { authenticationInfo: { userVerified: boolean } } }) => {
              if (!verification.authenticationInfo.userVerified) throw personNotVerified();
            },
          },
        }),
        genericOAuth({ config: oauthProviders(config, githubFetchJson) as never }),
      ],
    } as never) as unknown as AuthInstance;
    this.resolveAuth(auth);
    this.logger.log(`dashboard sign-in at ${origin}${AUTH_BASE_PATH}`);
  }

  async handle(request: Request): Promise<Response> {
    return (await this.auth).handler(request);
  }

  /** Signs a user up from the server side (the development user); their first team is made as for anyone, named `teamName` if given. */
  async signUp(email: string, password: string, name: string, teamName?: string): Promise<string> {
    return (await (await this.auth).api.signUpEmail({ body: { email, password, name, ...(teamName && { team_name: teamName }) } })).user.id;
  }

  /** The session of these request headers (its cookie), or null. */
  async session(headers: Headers): Promise<DashboardSession | null> {
    return (await this.auth).api.getSession({ headers });
  }
}

function signInMethod(path: string | undefined): string {
  if (!path) return 'unknown';
  if (path.startsWith('/callback/')) return path.slice('/callback/'.length);
  if (path.startsWith('/two-factor/')) return 'password+2fa';
  if (path.startsWith('/passkey/')) return 'passkey';
  if (path === '/sign-in/email') return 'password';
  return path.replace(/^\//, '');
}
