import { JetStreamApiError } from '@nats-io/jetstream';

/**
 * "JetStream system temporarily unavailable": the meta group has no leader. It is electing one (a
 * cluster just started or lost a server), or it lost its quorum: on a supercluster the meta group
 * spans every JetStream server of every region, and it needs more than half of them up.
 */
const CLUSTER_NOT_AVAILABLE = 10008;
/** "stream is offline" and "consumer is offline": every server of its group is down. */
const STREAM_OFFLINE = 10118;
const CONSUMER_OFFLINE = 10119;
/** How long a role's boot waits for JetStream to answer its stream and consumer requests before it gives up. */
const BOOT_WAIT_MS = 30_000;
/** Background retries of what boot had to leave for later: from 1 s, doubling up to 30 s. */
const BACKGROUND_FIRST_MS = 1_000;
const BACKGROUND_MAX_MS = 30_000;

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
 * Whether a JetStream API request failed because the servers that would answer it are out of
 * reach or leaderless, not because of what it asked: JetStream busy (above), or the stream or
 * consumer's servers all down. Creating or changing a stream or consumer needs the meta leader;
 * with the meta group's quorum lost (another region down) it fails so until that region returns.
 */
export function jetStreamUnavailable(error: unknown): boolean {
  if (jetStreamBusy(error)) return true;
  return error instanceof JetStreamApiError && (error.code === STREAM_OFFLINE || error.code === CONSUMER_OFFLINE);
}

/** The error's message, with what it means when it is the meta group's. */
export function jetStreamMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof JetStreamApiError && error.code === CLUSTER_NOT_AVAILABLE) {
    return `${message}: the JetStream meta group has no leader (it is electing one, or it lost its quorum: fewer than a majority of its servers are up)`;
  }
  return message;
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
        throw new Error(`${what}: JetStream did not answer within ${waitMs / 1000} s (${jetStreamMessage(error)})`, { cause: error });
      }
      onRetry(message, delay);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/** Settings of a stream or consumer that differ from this release's and could not be changed yet (JetStream unavailable). */
export interface DeferredChange {
  changed: string[];
  error: unknown;
}

/** A retry running in the background; `stop()` ends it (the next attempt never runs). */
export interface BackgroundRetry {
  stop(): void;
}

/**
 * Runs `attempt` again and again in the background, from 1 s apart doubling up to 30 s, until it
 * returns true (done) or throws an error that is not `jetStreamUnavailable` (given to `onGiveUp`),
 * or until stopped. For what a boot could not do with JetStream leaderless and carried on without.
 * Its timers do not keep the process alive.
 */
export function retryInBackground(
  attempt: () => Promise<boolean>,
  onGiveUp: (error: unknown) => void,
  delays: { firstMs: number; maxMs: number } = { firstMs: BACKGROUND_FIRST_MS, maxMs: BACKGROUND_MAX_MS },
): BackgroundRetry {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  const schedule = (delay: number) => {
    if (stopped) return;
    timer = setTimeout(() => void run(delay), delay);
    timer.unref();
  };
  const run = async (delay: number) => {
    try {
      if ((await attempt()) || stopped) return;
    } catch (error) {
      if (stopped) return;
      if (!jetStreamUnavailable(error)) return onGiveUp(error);
    }
    schedule(Math.min(2 * delay, delays.maxMs));
  };
  schedule(delays.firstMs);
  return {
    stop: () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
