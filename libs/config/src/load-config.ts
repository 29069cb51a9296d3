import { configSchema, HeraldConfig } from './config.schema';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Reads and validates the environment. This is the only place Herald reads `process.env`;
 * a wrong value stops boot with a message naming the variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Record<string, string> = {}): HeraldConfig {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(configSchema.shape ?? {})) {
    const value = overrides[key] ?? env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((i) => {
        const name = i.path.join('.') || 'environment';
        const got = raw[name] !== undefined && !SECRET.test(name) ? ` (got "${raw[name]}")` : '';
        // The message too may quote the value (`"region=url" is not region=value`).
        return withoutPasswords(`${name}: ${i.message}${got}`);
      }),
    );
  }
  return parsed.data;
}

/** The variables whose value is a secret: a wrong one is named, never echoed (boot errors end up in logs). */
const SECRET = /SECRET|_KEYS?$/;

/** A value as a boot error echoes it: each URL's password (`postgres://user:pw@host`) as `***`. */
function withoutPasswords(value: string): string {
  return value.replace(/(\/\/[^:@/\s]*:)[^@\s]*?@/g, '$1***@');
}
