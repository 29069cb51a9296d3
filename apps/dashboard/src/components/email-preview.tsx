import { Box, Code, Modal, ScrollArea, SegmentedControl, Stack, Text } from '@mantine/core';
import { useMemo, useState } from 'react';
import { renderEmailDocument } from '@herald/email-documents';
import { errorMessage } from '../lib/api-error';

const WIDTHS = { desktop: 680, mobile: 390 } as const;

/**
 * What the recipients get, rendered by the same code that sends it (libs/email-documents), at a
 * desktop and a phone width, and the plain-text part. Merge tags show as written: each recipient's
 * values are filled in when the broadcast is sent.
 */
export function EmailPreview({ opened, onClose, document, subject }: { opened: boolean; onClose: () => void; document: unknown; subject: string }) {
  const [view, setView] = useState<'desktop' | 'mobile' | 'text'>('desktop');
  const rendered = useMemo(() => {
    if (!opened) return null;
    try {
      return { ok: true as const, ...renderEmailDocument(document) };
    } catch (error) {
      return { ok: false as const, error: errorMessage(error) };
    }
  }, [opened, document]);
  return (
    <Modal opened={opened} onClose={onClose} title="Preview" size="auto" centered closeButtonProps={{ 'aria-label': 'Close the preview' }}>
      <Stack gap="sm" maw="calc(100vw - 48px)">
        <Text size="sm">
          <Text span fw={600}>
            Subject:
          </Text>{' '}
          {subject || '(no subject)'}
        </Text>
        <SegmentedControl
          aria-label="Preview as"
          value={view}
          onChange={(value) => setView(value as typeof view)}
          data={[
            { value: 'desktop', label: 'Desktop' },
            { value: 'mobile', label: 'Mobile' },
            { value: 'text', label: 'Plain text' },
          ]}
        />
        {rendered && !rendered.ok && (
          <Text c="red" size="sm" role="alert">
            The email cannot be rendered: {rendered.error}
          </Text>
        )}
        {rendered?.ok && view !== 'text' && (
          <Box
            style={{ width: WIDTHS[view], maxWidth: '100%', border: '1px solid var(--mantine-color-gray-3)', borderRadius: 8, overflow: 'hidden' }}
          >
            {/* An empty sandbox, as the Emails page's preview: styles and images show, nothing runs or navigates. */}
            <iframe
              title={`Email preview at ${view} width`}
              data-preview={view}
              srcDoc={rendered.html}
              sandbox=""
              style={{ width: '100%', height: '70vh', border: 0, display: 'block' }}
            />
          </Box>
        )}
        {rendered?.ok && view === 'text' && (
          <ScrollArea h="70vh" w={WIDTHS.desktop} maw="100%">
            <Code block data-preview="text" style={{ whiteSpace: 'pre-wrap' }}>
              {rendered.text}
            </Code>
          </ScrollArea>
        )}
      </Stack>
    </Modal>
  );
}
