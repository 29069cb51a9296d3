/**
 * better-auth's models under Herald's names: snake_case tables and columns, created by Herald's
 * own migration (1765300000000-people), never by better-auth's migrator. Passed to betterAuth()
 * and to its twoFactor and passkey plugins.
 */
const snake = (fields: readonly string[]): Record<string, string> =>
  Object.fromEntries(fields.map((f) => [f, f.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`).replace('credential_i_d', 'credential_id')]));

export const AUTH_MODELS = {
  user: { modelName: 'users', fields: snake(['emailVerified', 'createdAt', 'updatedAt']) },
  session: { modelName: 'user_sessions', fields: snake(['expiresAt', 'createdAt', 'updatedAt', 'ipAddress', 'userAgent', 'userId']) },
  account: {
    modelName: 'user_accounts',
    fields: snake([
      'accountId',
      'providerId',
      'userId',
      'accessToken',
      'refreshToken',
      'idToken',
      'accessTokenExpiresAt',
      'refreshTokenExpiresAt',
      'createdAt',
      'updatedAt',
    ]),
  },
  verification: { modelName: 'user_verifications', fields: snake(['expiresAt', 'createdAt', 'updatedAt']) },
} as const;

export const TWO_FACTOR_SCHEMA = {
  user: { fields: snake(['twoFactorEnabled']) },
  twoFactor: { modelName: 'user_two_factors', fields: snake(['backupCodes', 'userId', 'failedVerificationCount', 'lockedUntil']) },
};

export const PASSKEY_SCHEMA = {
  passkey: { modelName: 'user_passkeys', fields: snake(['publicKey', 'userId', 'credentialID', 'deviceType', 'backedUp', 'createdAt']) },
};
