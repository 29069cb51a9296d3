import { Inject, Injectable } from '@nestjs/common';
import { BROADCASTS_CONFIG, type BroadcastsConfig } from './broadcasts.config';
import { UnsubscribeKeys } from './unsubscribe-token';

/**
 * Where a broadcast's unsubscribe links point (`<base>/unsubscribe/<token>`): PUBLIC_API_URL, else
 * the URL the api role listens on, known once it listens (`start`). The fan-out waits for it.
 */
@Injectable()
export class BroadcastLinks {
  readonly keys: UnsubscribeKeys;
  private resolveBase!: (base: string) => void;
  private readonly base = new Promise<string>((resolve) => (this.resolveBase = resolve));

  constructor(@Inject(BROADCASTS_CONFIG.token) private readonly config: BroadcastsConfig) {
    this.keys = UnsubscribeKeys.fromConfig(config);
    if (config.PUBLIC_API_URL) this.resolveBase(this.normalized(config.PUBLIC_API_URL));
  }

  start(listeningUrl: string): void {
    this.resolveBase(this.normalized(this.config.PUBLIC_API_URL ?? listeningUrl));
  }

  /** `https://api.example.com/unsubscribe/` */
  unsubscribeBase(): Promise<string> {
    return this.base;
  }

  private normalized(url: string): string {
    return `${url.replace(/\/+$/, '')}/unsubscribe/`;
  }
}
