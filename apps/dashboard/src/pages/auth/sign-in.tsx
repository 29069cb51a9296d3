import { Alert, Button, Group, PasswordInput, Stack, TextInput } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useNavigate, useSearch } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { errorMessage } from '../../lib/api-error';
import { authClient, authErrorMessage, VERIFIED_CALLBACK } from '../../lib/auth';
import { passkeyErrorMessage } from '../../lib/passkey-errors';
import { providerErrorMessage } from '../../lib/provider-errors';
import { AuthLayout, FormError, SocialButtons, TextLink } from './auth-layout';

export function SignInPage() {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const search = useSearch({ strict: false }) as { error?: unknown; provider?: unknown; verified?: unknown };
  const verified = !search.error && (search.verified === 1 || search.verified === '1');
  const [error, setError] = useState<string | null>(providerErrorMessage(typeof search.error === 'string' ? search.error : '', search.provider));
  const [pending, setPending] = useState<'password' | 'passkey' | null>(null);

  const signedIn = async () => {
    await queryClient.invalidateQueries({ queryKey: ['me'] });
    await navigate({ to: '/' });
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setPending('password');
    setError(null);
    try {
      const { data, error: failure } = await authClient.signIn.email({ email, password, callbackURL: VERIFIED_CALLBACK });
      if (failure) {
        // 403 from better-auth: the address is not verified yet.
        if (failure.status === 403) await navigate({ to: '/verify-email', search: { email } });
        else setError(authErrorMessage(failure));
      } else if (data && 'twoFactorRedirect' in data && data.twoFactorRedirect) {
        await navigate({ to: '/two-factor' });
      } else {
        await signedIn();
      }
    } catch (failure) {
      setError(errorMessage(failure));
    } finally {
      setPending(null);
    }
  };

  const passkey = async () => {
    setPending('passkey');
    setError(null);
    try {
      const result = await authClient.signIn.passkey();
      if (result?.error) setError(passkeyErrorMessage(result.error));
      else await signedIn();
    } catch (failure) {
      setError(errorMessage(failure));
    } finally {
      setPending(null);
    }
  };

  return (
    <AuthLayout
      title="Sign in"
      subtitle="Manage your domains, emails, API keys and webhooks."
      footer={
        <>
          New to Herald? <TextLink to="/sign-up">Create an account</TextLink>
        </>
      }
    >
      <form onSubmit={(event) => void submit(event)} noValidate>
        <Stack gap="sm">
          <FormError message={error} />
          {verified && !error && (
            <Alert color="green" variant="light" role="status">
              Your email address is verified. Sign in to continue.
            </Alert>
          )}
          <TextInput
            label="Email"
            type="email"
            autoComplete="username webauthn"
            required
            value={email}
            onChange={(e) => setEmail(e.currentTarget.value)}
          />
          <PasswordInput
            label="Password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.currentTarget.value)}
          />
          <Group justify="flex-end">
            <TextLink to="/forgot-password">Forgot your password?</TextLink>
          </Group>
          <Button type="submit" fullWidth loading={pending === 'password'}>
            Sign in
          </Button>
          <Button variant="light" fullWidth loading={pending === 'passkey'} onClick={() => void passkey()}>
            Sign in with a passkey
          </Button>
        </Stack>
      </form>
      <SocialButtons label="Sign in" onError={setError} />
    </AuthLayout>
  );
}
