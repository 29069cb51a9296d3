import { Alert, Anchor, Box, Button, Center, Divider, Paper, Stack, Text, Title } from '@mantine/core';
import { Link } from '@tanstack/react-router';
import { useState, type ReactNode } from 'react';
import { errorMessage } from '../../lib/api-error';
import { authClient, authErrorMessage } from '../../lib/auth';
import { PROVIDERS, providerErrorMessage, type Provider } from '../../lib/provider-errors';
import { useSignInProviders } from '../../lib/queries';

export function AuthLayout({ title, subtitle, children, footer }: { title: string; subtitle?: ReactNode; children: ReactNode; footer?: ReactNode }) {
  return (
    <Center mih="100vh" p="md" bg="gray.0" component="main">
      <Box w="100%" maw={420}>
        <Text fw={700} size="xl" ta="center" mb="md">
          Herald
        </Text>
        <Paper withBorder shadow="xs" p={{ base: 'md', sm: 'xl' }} radius="md">
          <Title order={1} size="h3" mb={4}>
            {title}
          </Title>
          {subtitle && (
            <Text c="dimmed" size="sm" mb="md">
              {subtitle}
            </Text>
          )}
          {children}
        </Paper>
        {footer && (
          <Text size="sm" ta="center" mt="md">
            {footer}
          </Text>
        )}
      </Box>
    </Center>
  );
}

export function FormError({ message }: { message: string | null }) {
  if (!message) return null;
  return (
    <Alert color="red" variant="light" role="alert">
      {message}
    </Alert>
  );
}

export function TextLink({ to, children }: { to: string; children: ReactNode }) {
  return (
    <Anchor component={Link} to={to} size="sm">
      {children}
    </Anchor>
  );
}

/**
 * Google and GitHub, those configured: better-auth answers the provider's URL and the browser goes there. A failure
 * comes back to the sign-in page as `?error=<code>&provider=<id>`, which it puts in words.
 */
export function SocialButtons({ label, onError }: { label: 'Sign in' | 'Sign up'; onError: (message: string | null) => void }) {
  const [pending, setPending] = useState<Provider | null>(null);
  const offered = useSignInProviders();
  // Those this Herald has a client id for; every one if the list could not be had (a click then says what is wrong).
  const providers = offered.isError ? (Object.keys(PROVIDERS) as Provider[]) : (offered.data ?? []);
  const go = async (provider: Provider) => {
    setPending(provider);
    onError(null);
    try {
      const { error } = await authClient.signIn.social({
        provider,
        callbackURL: '/dashboard/',
        errorCallbackURL: `/dashboard/sign-in?provider=${provider}`,
        newUserCallbackURL: '/dashboard/',
      });
      if (error) {
        // Herald answers 404 for a provider it has no client id for.
        onError(error.status === 404 ? providerErrorMessage('provider_not_found', provider) : authErrorMessage(error));
        setPending(null);
      }
      // On success the browser is leaving for the provider: the button stays busy until it has.
    } catch (failure) {
      onError(errorMessage(failure));
      setPending(null);
    }
  };
  if (providers.length === 0) return null;
  return (
    <Stack gap="xs">
      <Divider label="or" labelPosition="center" my="xs" />
      {providers.map((provider) => (
        <Button key={provider} variant="default" fullWidth loading={pending === provider} onClick={() => void go(provider)}>
          {label} with {PROVIDERS[provider]}
        </Button>
      ))}
    </Stack>
  );
}
