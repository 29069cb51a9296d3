import { Button, FileInput, Group, Modal, Progress, Radio, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { API_BASE, csrfHeaders } from '../lib/api';
import { errorFromResponse } from '../lib/api-error';
import { formatDate } from '../lib/format';
import { useTeamId, useTeamQuery } from '../lib/queries';
import type { ContactImportReport } from '../lib/types';
import { DataList } from './data-list';
import { ErrorAlert, StatusBadge } from './ui';

export const FINISHED = new Set(['completed', 'failed']);

/** POST …/contact-imports as multipart/form-data (the REST API's form), with the CSRF header: answers the import, queued. */
function useImport() {
  const teamId = useTeamId();
  const client = useQueryClient();
  return useMutation<ContactImportReport, Error, { file: File; onConflict: string }>({
    mutationFn: async ({ file, onConflict }) => {
      const form = new FormData();
      form.append('file', file);
      form.append('on_conflict', onConflict);
      const response = await fetch(`${API_BASE}/teams/${teamId}/contact-imports`, {
        method: 'POST',
        headers: { accept: 'application/json', ...(await csrfHeaders('POST')) },
        credentials: 'same-origin',
        body: form,
      });
      const text = await response.text();
      if (!response.ok) throw errorFromResponse(response.status, text);
      return JSON.parse(text) as ContactImportReport;
    },
    onSuccess: () => client.invalidateQueries({ predicate: (q) => q.queryKey[0] === 'team' && q.queryKey[1] === teamId }),
  });
}

/**
 * The import as its rows are written in the background: polled every second until it is
 * completed or failed, then its report. Closing the window leaves the import going.
 */
function ImportProgress({ started, onDone }: { started: ContactImportReport; onDone: () => void }) {
  const teamId = useTeamId();
  const client = useQueryClient();
  const current = useTeamQuery<ContactImportReport>(`/contact-imports/${started.id}`, undefined, {
    refetchInterval: (query) => (query.state.data && FINISHED.has(query.state.data.status) ? false : 1000),
  });
  const report = current.data ?? started;
  const finished = FINISHED.has(report.status);
  // Opened from the page for a finished import: its list entry has no rejected rows, the report comes with the import.
  const loading = !current.data && FINISHED.has(started.status);
  useEffect(() => {
    // The new contacts show in the list behind the window once the import is done.
    if (finished)
      void client.invalidateQueries({
        predicate: (q) => q.queryKey[0] === 'team' && q.queryKey[1] === teamId && q.queryKey[2] !== `/contact-imports/${started.id}`,
      });
  }, [finished, client, teamId, started.id]);
  if (loading) return <Text size="sm">Loading the report…</Text>;
  if (finished) return <ImportReport report={report} onDone={onDone} />;
  const { counts } = report;
  const done = counts.created + counts.updated + counts.skipped + counts.failed;
  const percent = counts.total ? Math.floor((done / counts.total) * 100) : 0;
  return (
    <Stack>
      <ErrorAlert error={current.error} title="The import's progress could not load" />
      <Group gap="xs">
        <StatusBadge status={report.status} />
        <Text size="sm" aria-live="polite">
          {report.status === 'queued' ? 'Waiting to start' : `Importing: ${done.toLocaleString('en')} of ${counts.total.toLocaleString('en')} rows`}
        </Text>
      </Group>
      <Progress value={percent} animated aria-label={`Rows imported: ${done} of ${counts.total}`} />
      <Text size="xs" c="dimmed">
        The file is stored and imported in the background: closing this window does not stop it.
      </Text>
      <Group justify="flex-end">
        <Button variant="default" onClick={onDone}>
          Close
        </Button>
      </Group>
    </Stack>
  );
}

/** The upload form, then the import's progress and report; `following`: an import going on already (opened from the page), shown without the form. */
export function ImportContacts({
  opened,
  onClose,
  onClosed,
  following = null,
}: {
  opened: boolean;
  onClose: () => void;
  onClosed?: () => void;
  following?: ContactImportReport | null;
}) {
  const [file, setFile] = useState<File | null>(null);
  const [onConflict, setOnConflict] = useState('upsert');
  const upload = useImport();
  const close = onClose;
  // Cleared once the window has faded out, so it does not change under the eye while it goes.
  const closed = () => {
    upload.reset();
    setFile(null);
    onClosed?.();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (file) upload.mutate({ file, onConflict });
  };
  return (
    <Modal
      opened={opened}
      onClose={close}
      onExitTransitionEnd={closed}
      title="Import contacts from CSV"
      centered
      size="lg"
      closeButtonProps={{ 'aria-label': 'Close' }}
    >
      {(upload.data ?? following) ? (
        <ImportProgress started={(upload.data ?? following)!} onDone={close} />
      ) : (
        <form onSubmit={submit}>
          <Stack>
            <ErrorAlert error={upload.error} title="The file was not imported" />
            <FileInput
              label="CSV file"
              description="A header line with an email column; first_name, last_name, unsubscribed and columns named like your contact properties are read too."
              placeholder="Choose a .csv file"
              accept=".csv,text/csv"
              required
              clearable
              clearButtonProps={{ 'aria-label': 'Clear the file' }}
              value={file}
              onChange={setFile}
              data-autofocus
            />
            <Radio.Group label="Addresses that are contacts already" value={onConflict} onChange={setOnConflict}>
              <Stack gap={6} mt={6}>
                <Radio value="upsert" label="Update them with the file's values (empty cells keep what is there)" />
                <Radio value="skip" label="Leave them as they are" />
              </Stack>
            </Radio.Group>
            <Group justify="flex-end">
              <Button variant="default" onClick={close}>
                Cancel
              </Button>
              <Button type="submit" loading={upload.isPending} disabled={!file}>
                Import
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}

function ImportReport({ report, onDone }: { report: ContactImportReport; onDone: () => void }) {
  const { counts } = report;
  const figures: [string, number][] = [
    ['Rows', counts.total],
    ['Created', counts.created],
    ['Updated', counts.updated],
    ['Skipped', counts.skipped],
    ['Rejected', counts.failed],
  ];
  return (
    <Stack>
      <Group gap="xs">
        <StatusBadge status={report.status} />
        <Text size="sm">Import finished {formatDate(report.completed_at)}</Text>
      </Group>
      <SimpleGrid cols={{ base: 2, xs: 5 }} spacing="xs" component="dl" m={0}>
        {figures.map(([label, value]) => (
          <div key={label}>
            <Text component="dt" size="xs" c="dimmed">
              {label}
            </Text>
            <Text component="dd" fw={600} m={0}>
              {value}
            </Text>
          </div>
        ))}
      </SimpleGrid>
      {report.rejected_rows.length === 0 ? (
        <Text size="sm">Every row was taken.</Text>
      ) : (
        <section aria-labelledby="rejected-rows">
          <Title order={2} size="h5" id="rejected-rows" mb={4}>
            Rows not imported
          </Title>
          <DataList
            rows={report.rejected_rows}
            rowKey={(r) => String(r.line)}
            minWidth={480}
            columns={[
              { header: 'Line', phone: 'title', nowrap: true, cell: (r) => `Line ${r.line}` },
              { header: 'Address', phone: 'line', cell: (r) => r.email ?? '—' },
              { header: 'Reason', phone: 'line', cell: (r) => r.reason },
            ]}
          />
          {report.rejected_rows.length < counts.failed + counts.skipped && (
            <Text size="xs" c="dimmed" mt={4}>
              Only the first {report.rejected_rows.length} are listed.
            </Text>
          )}
        </section>
      )}
      <Group justify="flex-end">
        <Button onClick={onDone}>Done</Button>
      </Group>
    </Stack>
  );
}
