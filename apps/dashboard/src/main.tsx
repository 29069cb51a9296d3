import '@mantine/core/styles.css';
import { createTheme, MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider } from '@tanstack/react-router';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { isSignedOut } from './lib/api-error';
import { router } from './router';

const theme = createTheme({
  primaryColor: 'indigo',
  // Shade 8 keeps white button text and indigo links above WCAG AA contrast (4.5:1).
  primaryShade: 8,
  defaultRadius: 'sm',
  fontFamilyMonospace: 'ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace',
  headings: { fontWeight: '600' },
  components: {
    // Native overflow on one div that takes focus: a wide table scrolls from the keyboard at 390 px (axe scrollable-region-focusable).
    TableScrollContainer: { defaultProps: { type: 'native', tabIndex: 0 } },
  },
});

// Mantine's dimmed text (gray 6) is 3.3:1 on white; gray 7 passes WCAG AA.
const darkerDimmed = () => ({ variables: {}, light: { '--mantine-color-dimmed': 'var(--mantine-color-gray-7)' }, dark: {} });

const queryClient = new QueryClient({
  defaultOptions: {
    // A 4xx will not change by asking again; a lost session goes to sign-in (the shell does that).
    queries: { retry: (count, error) => count < 2 && !(error && 'status' in error && Number(error.status) < 500) && !isSignedOut(error) },
  },
});

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <MantineProvider theme={theme} defaultColorScheme="light" cssVariablesResolver={darkerDimmed}>
        <QueryClientProvider client={queryClient}>
          <RouterProvider router={router} />
        </QueryClientProvider>
      </MantineProvider>
    </StrictMode>,
  );
}
