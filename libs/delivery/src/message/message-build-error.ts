/**
 * Why a message could not be built. `permanent` tells the engine whether trying again later can
 * help: a 404 attachment URL will not heal, a timed-out or 503 one may.
 */
export class MessageBuildError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
    this.name = 'MessageBuildError';
  }
}
