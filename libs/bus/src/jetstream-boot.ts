import { JetStreamApiError } from '@nats-io/jetstream';

/** "JetStream system temporarily unavailable": the meta group is electing a leader (a cluster just started or lost a server). */
const CLUSTER_NOT_AVAILABLE = 10008;
/** How long a role's boot waits for JetStream to answer its stream and consumer requests before it gives up. */
const BOOT_WAIT_MS = 30_000;

/**
 * Whether a JetStream API request failed only because the cluster is busy forming: its meta group
 * electing a leader, or a request timing out while it creates replicated streams for several
 * booting roles at once (three roles making twelve R3 streams each on a fresh 3-node cluster timed
 * out their 5 s requests). Stream and consumer requests are idempotent, so asking again is safe.
 */
function jetStreamBusy(error: unknown): boolean {
  if (error instanceof JetStreamApiError && error.code === CLUSTER_NOT_AVAILABLE) return true;
  return error instanceof Error && error.name === 'TimeoutError';
}

/**
 * Runs a role's boot-time JetStream work, again while JetStream is busy forming (backing off from
 * 100 ms to 2 s), for at most `waitMs`. Past it, the error says what was being done and for how
 * long it was tried, instead of a bare "timeout".
 */
export async function whileJetStreamForms<T>(
  what: string,
  work: () => Promise<T>,
  onRetry: (message: string, delayMs: number) => void,
  waitMs = BOOT_WAIT_MS,
): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (let delay = 100; ; delay = Math.min(2 * delay, 2_000)) {
    try {
      return await work();
    } catch (error) {
      if (!jetStreamBusy(error)) throw error;
      const message = (error as Error).message;
      if (Date.now() + delay > deadline) {
        throw new Error(`${what}: JetStream did not answer within ${waitMs / 1000} s (${message})`, { cause: error });
      }
      onRetry(message, delay);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
