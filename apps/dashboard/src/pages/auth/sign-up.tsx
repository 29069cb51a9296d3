import { Button, PasswordInput, Select, Stack, TextInput } from '@mantine/core';
import { useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { errorMessage } from '../../lib/api-error';
import { authClient, authErrorMessage, VERIFIED_CALLBACK } from '../../lib/auth';
import { useRegions } from '../../lib/queries';
import { AuthLayout, FormError, SocialButtons, TextLink } from './auth-layout';

/** better-auth's minPasswordLength on the server (libs/people). */
export const MIN_PASSWORD = 10;

export function SignUpPage() {
  const navigate = useNavigate();
  const regions = useRegions();
  const [form, setForm] = useState({ name: '', email: '', password: '', team_name: '', region: '' });
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  const region = form.region || regions.data?.default || '';
  const set = (field: keyof typeof form) => (value: string) => setForm((current) => ({ ...current, [field]: value }));

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (form.password.length < MIN_PASSWORD) return setError(`Choose a password of at least ${MIN_PASSWORD} characters.`);
    if (!region) return setError('Choose a region for your team.');
    setPending(true);
    setError(null);
    try {
      const extra = { team_name: form.team_name || `${form.name}'s team`, region };
      const { error: failure } = await authClient.signUp.email({
        name: form.name,
        email: form.email,
        password: form.password,
        callbackURL: VERIFIED_CALLBACK,
        ...extra,
      } as never);
      if (failure) setError(authErrorMessage(failure));
      else await navigate({ to: '/verify-email', search: { email: form.email } });
    } catch (failure) {
      setError(errorMessage(failure));
    } finally {
      setPending(false);
    }
  };

  return (
    <AuthLayout
      title="Create your account"
      subtitle="A team is created with you as its owner; its region is where your email is sent from."
      footer={
        <>
          Already have an account? <TextLink to="/sign-in">Sign in</TextLink>
        </>
      }
    >
      <form onSubmit={(event) => void submit(event)} noValidate>
        <Stack gap="sm">
          <FormError message={error} />
          {regions.error && <FormError message={`The regions could not be loaded: ${errorMessage(regions.error)}`} />}
          <TextInput label="Your name" autoComplete="name" required value={form.name} onChange={(e) => set('name')(e.currentTarget.value)} />
          <TextInput
            label="Email"
            type="email"
            autoComplete="email"
            required
            value={form.email}
            onChange={(e) => set('email')(e.currentTarget.value)}
          />
          <PasswordInput
            label="Password"
            description={`At least ${MIN_PASSWORD} characters.`}
            autoComplete="new-password"
            required
            value={form.password}
            onChange={(e) => set('password')(e.currentTarget.value)}
          />
          <TextInput label="Team name" autoComplete="organization" value={form.team_name} onChange={(e) => set('team_name')(e.currentTarget.value)} />
          <Select
            label="Region"
            required
            placeholder={regions.isPending ? 'Loading regions…' : 'Choose a region'}
            data={regions.data?.data ?? []}
            value={region || null}
            onChange={(value) => set('region')(value ?? '')}
            allowDeselect={false}
          />
          <Button type="submit" fullWidth loading={pending}>
            Create account
          </Button>
        </Stack>
      </form>
      <SocialButtons label="Sign up" onError={setError} />
    </AuthLayout>
  );
}
