import { Anchor, Button, Checkbox, Stack, TextInput } from '@mantine/core';
import { useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { authClient, authErrorMessage, settle } from '../../lib/auth';
import { passkeyErrorMessage } from '../../lib/passkey-errors';
import { AuthLayout, FormError, TextLink } from './auth-layout';

/** The second step of a sign-in: a code from the authenticator app, or one of the backup codes. */
export function TwoFactorPage() {
  const navigate = useNavigate();
  const [mode, setMode] = useState<'totp' | 'backup'>('totp');
  const [code, setCode] = useState('');
  const [trust, setTrust] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState<'code' | 'passkey' | null>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setPending('code');
    setError(null);
    const trimmed = code.replace(/\s/g, '');
    const { error: failure } =
      mode === 'totp'
        ? await settle(authClient.twoFactor.verifyTotp({ code: trimmed, trustDevice: trust }))
        : await settle(authClient.twoFactor.verifyBackupCode({ code: trimmed, trustDevice: trust }));
    setPending(null);
    if (failure) setError(authErrorMessage(failure));
    else await navigate({ to: '/' });
  };
  // A passkey checks the person itself (Herald requires user verification), so it signs in in
  // place of the code: the password typed before is not needed with it.
  const passkey = async () => {
    setPending('passkey');
    setError(null);
    const { error: failure } = await settle(authClient.signIn.passkey());
    setPending(null);
    if (failure) setError(passkeyErrorMessage(failure));
    else await navigate({ to: '/' });
  };
  return (
    <AuthLayout
      title="Two-factor authentication"
      subtitle={mode === 'totp' ? 'Enter the 6-digit code from your authenticator app.' : 'Enter one of your backup codes. Each works once.'}
      footer={<TextLink to="/sign-in">Back to sign in</TextLink>}
    >
      <form onSubmit={(event) => void submit(event)} noValidate>
        <Stack gap="sm">
          <FormError message={error} />
          <TextInput
            label={mode === 'totp' ? 'Authentication code' : 'Backup code'}
            autoComplete="one-time-code"
            inputMode={mode === 'totp' ? 'numeric' : 'text'}
            ff="monospace"
            required
            value={code}
            onChange={(e) => setCode(e.currentTarget.value)}
          />
          <Checkbox label="Trust this device for 30 days" checked={trust} onChange={(e) => setTrust(e.currentTarget.checked)} />
          <Button type="submit" loading={pending === 'code'}>
            Verify
          </Button>
          <Button variant="light" loading={pending === 'passkey'} onClick={() => void passkey()}>
            Use a passkey instead
          </Button>
          <Anchor component="button" type="button" size="sm" onClick={() => setMode(mode === 'totp' ? 'backup' : 'totp')}>
            {mode === 'totp' ? 'Use a backup code instead' : 'Use the authenticator app instead'}
          </Anchor>
        </Stack>
      </form>
    </AuthLayout>
  );
}
