import { betterAuth } from 'better-auth';
import { twoFactor } from 'better-auth/plugins';
import { passkey } from '@better-auth/passkey';
import { getMigrations } from 'better-auth/db/migration';
import pg from 'pg';
import { createRequire } from 'module';
const require = createRequire(import.meta.url);
require('@swc-node/register');
