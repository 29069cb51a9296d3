import { Alert, Button, PasswordInput, Stack, Text, TextInput } from '@mantine/core';
import { useSearch } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { authClient, authErrorMessage, settle, VERIFIED_CALLBACK } from '../../lib/auth';
import { AuthLayout, FormError, TextLink } from './auth-layout';
import { MIN_PASSWORD } from './sign-up';

function useSearchParam(name: string): string {
  const search = useSearch({ strict: false }) as Record<string, unknown>;
  const value = search[name];
  return typeof value === 'string' ? value : '';
}

/** After sign-up (or a sign-in before verifying): the link is in the inbox. */
export function VerifyEmailPage() {
  const email = useSearchParam('email');
  const [sent, setSent] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const resend = async () => {
    setError(null);
    const { error: failure } = await settle(authClient.sendVerificationEmail({ email, callbackURL: VERIFIED_CALLBACK }));
    if (failure) setError(authErrorMessage(failure));
    else setSent(true);
  };
  return (
    <AuthLayout title="Check your inbox" footer={<TextLink to="/sign-in">Back to sign in</TextLink>}>
      <Stack gap="sm">
        <Text size="sm">
          We sent a link to {email ? <strong>{email}</strong> : 'your address'}. Open it to verify your address, then sign in. The link expires in an
          hour.
        </Text>
        <FormError message={error} />
        {sent && (
          <Alert color="green" variant="light" role="status">
            A new link is on its way.
          </Alert>
        )}
        {email && (
          <Button variant="default" onClick={() => void resend()}>
            Send the link again
          </Button>
        )}
      </Stack>
    </AuthLayout>
  );
}

export function ForgotPasswordPage() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setPending(true);
    setError(null);
    const { error: failure } = await settle(authClient.requestPasswordReset({ email, redirectTo: '/dashboard/reset-password' }));
    setPending(false);
    if (failure) setError(authErrorMessage(failure));
    else setSent(true);
  };
  return (
    <AuthLayout
      title="Reset your password"
      subtitle="We email you a link to choose a new one."
      footer={<TextLink to="/sign-in">Back to sign in</TextLink>}
    >
      {sent ? (
        <Alert color="green" variant="light" role="status">
          If an account uses {email}, a reset link is on its way to it.
        </Alert>
      ) : (
        <form onSubmit={(event) => void submit(event)} noValidate>
          <Stack gap="sm">
            <FormError message={error} />
            <TextInput label="Email" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} />
            <Button type="submit" loading={pending}>
              Send the reset link
            </Button>
          </Stack>
        </form>
      )}
    </AuthLayout>
  );
}

export function ResetPasswordPage() {
  const token = useSearchParam('token');
  const linkError = useSearchParam('error');
  const [password, setPassword] = useState('');
  const [done, setDone] = useState(false);
  const [error, setError] = useState<string | null>(linkError ? 'This reset link is not valid or has expired. Ask for a new one.' : null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (password.length < MIN_PASSWORD) return setError(`Choose a password of at least ${MIN_PASSWORD} characters.`);
    const { error: failure } = await settle(authClient.resetPassword({ newPassword: password, token }));
    if (failure) setError(authErrorMessage(failure));
    else setDone(true);
  };
  return (
    <AuthLayout title="Choose a new password" footer={<TextLink to="/forgot-password">Ask for a new link</TextLink>}>
      {done ? (
        <Alert color="green" variant="light" role="status">
          Your password is changed. <TextLink to="/sign-in">Sign in</TextLink>
        </Alert>
      ) : (
        <form onSubmit={(event) => void submit(event)} noValidate>
          <Stack gap="sm">
            <FormError message={error} />
            <PasswordInput
              label="New password"
              description={`At least ${MIN_PASSWORD} characters.`}
              autoComplete="new-password"
              required
              value={password}
              onChange={(e) => setPassword(e.currentTarget.value)}
            />
            <Button type="submit" disabled={!token}>
              Change password
            </Button>
          </Stack>
        </form>
      )}
    </AuthLayout>
  );
}
