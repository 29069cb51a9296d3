import { Alert, Button, Code, Group, Image, PasswordInput, SimpleGrid, Stack, Text, TextInput } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Copy, ErrorAlert, StatusBadge } from '../components/ui';
import { authClient } from '../lib/auth';
import { deviceName, formatDate } from '../lib/format';
import { isIpAddress, passkeyErrorMessage } from '../lib/passkey-errors';
import { Section, unwrap } from './account';

function BackupCodes({ codes }: { codes: string[] }) {
  return (
    <Alert color="yellow" variant="light" title="Save your backup codes">
      <Text size="sm" mb="xs">
        Each code signs you in once if you lose your authenticator. They are shown only now.
      </Text>
      <SimpleGrid cols={2} spacing={4} maw={320}>
        {codes.map((code) => (
          <Code key={code}>{code}</Code>
        ))}
      </SimpleGrid>
      <Group mt="xs">
        <Copy value={codes.join('\n')} label="the backup codes" />
      </Group>
    </Alert>
  );
}

/** TOTP: password → QR code of the otpauth URI → a code from the app turns it on; backup codes once. */
export function Mfa({ enabled, hasPassword }: { enabled: boolean; hasPassword: boolean }) {
  const client = useQueryClient();
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [setup, setSetup] = useState<{ uri: string; qr: string; backupCodes: string[] } | null>(null);
  const [done, setDone] = useState<string[] | null>(null);
  const start = useMutation({
    mutationFn: async () => {
      const data = await unwrap(authClient.twoFactor.enable({ password }));
      if (data.method !== 'totp') throw new Error('Herald answered an unexpected two-factor method.');
      const { toDataURL } = await import('qrcode');
      return { uri: data.totpURI, qr: await toDataURL(data.totpURI, { margin: 1, width: 200 }), backupCodes: data.backupCodes };
    },
    onSuccess: (value) => (setSetup(value), setPassword('')),
  });
  const verify = useMutation({
    mutationFn: () => unwrap(authClient.twoFactor.verifyTotp({ code: code.replace(/\s/g, '') })),
    onSuccess: async () => {
      setDone(setup?.backupCodes ?? []);
      setSetup(null);
      await client.invalidateQueries({ queryKey: ['me'] });
    },
  });
  const disable = useMutation({
    mutationFn: () => unwrap(authClient.twoFactor.disable({ password })),
    onSuccess: () => (setPassword(''), client.invalidateQueries({ queryKey: ['me'] })),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (setup) verify.mutate();
    else if (enabled) disable.mutate();
    else start.mutate();
  };
  return (
    <Section
      title="Two-factor authentication"
      description="A code from an authenticator app after your password at every sign-in. Sign-ins with Google or GitHub rely on their own two-factor settings; a passkey is two factors by itself."
    >
      <Group gap="xs" mb="sm">
        <StatusBadge status={enabled ? 'enabled' : 'disabled'} />
      </Group>
      {!hasPassword && !enabled && (
        <Text size="sm" c="dimmed">
          Codes protect sign-ins with a password, and you have none yet. Set a password above to turn them on.
        </Text>
      )}
      {done && <BackupCodes codes={done} />}
      <form onSubmit={submit} hidden={!hasPassword && !enabled}>
        <Stack gap="xs" maw={420} mt="xs">
          <ErrorAlert error={start.error ?? verify.error ?? disable.error} />
          {setup ? (
            <>
              <Text size="sm">Scan this code with your authenticator app, then enter the 6-digit code it shows.</Text>
              <Image src={setup.qr} alt="QR code of the authenticator secret" w={200} h={200} />
              <Text size="xs" c="dimmed" ff="monospace" style={{ wordBreak: 'break-all' }}>
                {setup.uri}
              </Text>
              <TextInput
                label="Code from the app"
                autoComplete="one-time-code"
                inputMode="numeric"
                required
                value={code}
                onChange={(e) => setCode(e.currentTarget.value)}
              />
              <Group>
                <Button type="submit" loading={verify.isPending}>
                  Turn on
                </Button>
              </Group>
            </>
          ) : (
            <>
              <PasswordInput
                label="Your password"
                autoComplete="current-password"
                required
                value={password}
                onChange={(e) => setPassword(e.currentTarget.value)}
              />
              <Group>
                <Button
                  type="submit"
                  color={enabled ? 'red' : undefined}
                  variant={enabled ? 'light' : 'filled'}
                  loading={start.isPending || disable.isPending}
                >
                  {enabled ? 'Turn off two-factor' : 'Set up two-factor'}
                </Button>
              </Group>
            </>
          )}
        </Stack>
      </form>
    </Section>
  );
}

/**
 * Passkeys: add one (named after this device unless told), remove one. A passkey signs in without
 * the password and stands in for the two-factor code. WebAuthn refuses a page opened at an IP
 * address, so there the section says so instead of offering a ceremony that cannot work.
 */
export function Passkeys() {
  const client = useQueryClient();
  const [name, setName] = useState('');
  const atIp = isIpAddress(window.location.hostname);
  const passkeys = useQuery({ queryKey: ['auth', 'passkeys'], queryFn: () => unwrap(authClient.passkey.listUserPasskeys()) });
  const refresh = () => client.invalidateQueries({ queryKey: ['auth', 'passkeys'] });
  const add = useMutation({
    mutationFn: async () => {
      const result = await authClient.passkey.addPasskey({ name: name.trim() || deviceName(navigator.userAgent) });
      if (result?.error) throw new Error(passkeyErrorMessage(result.error) ?? 'The passkey was not added.');
    },
    onSuccess: () => (setName(''), refresh()),
  });
  const remove = useMutation({ mutationFn: (id: string) => unwrap(authClient.passkey.deletePasskey({ id })), onSuccess: refresh });
  const list = passkeys.data ?? [];
  return (
    <Section
      title="Passkeys"
      description="Sign in with your device's fingerprint, face, screen lock or security key instead of a password. A passkey also stands in for the two-factor code."
    >
      <ErrorAlert error={passkeys.error ?? add.error ?? remove.error} title="Passkeys" />
      {add.isSuccess && (
        <Alert color="green" variant="light" role="status" mb="sm">
          The passkey is added. Next time, choose “Sign in with a passkey”.
        </Alert>
      )}
      <Stack gap={4} mb="sm" component="ul" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
        {passkeys.isSuccess && list.length === 0 && (
          <Text size="sm" c="dimmed" component="li">
            {atIp ? 'No passkeys yet.' : 'No passkeys yet. Add one to sign in on this device without typing your password.'}
          </Text>
        )}
        {list.map((p) => (
          <Group key={p.id} component="li" justify="space-between" wrap="nowrap">
            <Text size="sm">
              {p.name || 'Passkey'} · added {formatDate(String(p.createdAt))}
            </Text>
            <Button
              size="xs"
              variant="subtle"
              color="red"
              aria-label={`Remove passkey ${p.name || ''}`.trim()}
              style={{ flexShrink: 0 }}
              loading={remove.isPending && remove.variables === p.id}
              onClick={() => remove.mutate(p.id)}
            >
              Remove
            </Button>
          </Group>
        ))}
      </Stack>
      {atIp ? (
        <Alert color="yellow" variant="light" role="note">
          {/* A title in the alert's own yellow would fail contrast: the words carry it in the text colour. */}
          <Text size="sm" fw={600}>
            Passkeys need a domain name
          </Text>
          <Text size="sm">
            Browsers allow passkeys only for a site opened at a domain name, and this dashboard is at the address {window.location.hostname}. Open it
            at its domain name (the DASHBOARD_URL Herald is configured with) to add or use a passkey.
          </Text>
        </Alert>
      ) : (
        <Group align="flex-end" gap="xs">
          <TextInput
            label="Passkey name"
            placeholder={deviceName(navigator.userAgent)}
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
          />
          <Button variant="default" loading={add.isPending} onClick={() => add.mutate()}>
            Add a passkey
          </Button>
        </Group>
      )}
    </Section>
  );
}
