/**
 * Where a key lives: keys are per team and per endpoint (Resend scopes them to "this HTTP method
 * and endpoint"), so the same key on `POST /emails` and `POST /emails/batch` is two keys.
 */
export interface IdempotencyScope {
  readonly teamId: string;
  /** A stable name of the operation, e.g. `POST /emails`; must not vary between regions. */
  readonly endpoint: string;
  readonly key: string;
}

/**
 * The right to perform the request for a key. It is backed by an in-flight marker in Redis that
 * carries the lease's token, so only this lease can complete or abandon it.
 */
export interface Lease {
  readonly scope: IdempotencyScope;
  readonly requestHash: string;
  readonly token: string;
  /** When the marker stops holding the key (ms since the epoch, by the claiming process's clock). */
  readonly deadline: number;
}

/** The first response for the key, to be sent again as is (status and body). */
export interface Replay {
  readonly kind: 'replay';
  readonly statusCode: number;
  readonly body: unknown;
}

export interface Proceed {
  readonly kind: 'proceed';
  readonly lease: Lease;
}

export type Begin = Proceed | Replay;
