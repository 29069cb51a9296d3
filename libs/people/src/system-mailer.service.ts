import { Inject, Injectable, Logger } from '@nestjs/common';
import { TeamsService } from '@herald/accounts';
import { DomainsRepository, DomainsService } from '@herald/domains';
import { SendService } from '@herald/emails';
import { isPlanId } from '@herald/limits';
import { PEOPLE_CONFIG, type PeopleConfig } from './people.config';

/** The team that owns MAIL_DOMAIN and sends the dashboard's own mail. */
export const SYSTEM_TEAM_NAME = 'Herald';

export interface SystemSender {
  teamId: string;
  domainId: string;
  from: string;
}

/**
 * The dashboard is Herald's own first customer: verification, password-reset and invitation
 * emails go through the same accept path as the REST API, from `no-reply@<MAIL_DOMAIN>`, by the
 * system team that owns MAIL_DOMAIN (created at first use). The operator publishes and verifies
 * MAIL_DOMAIN's records like any customer's (`herald domain verify <MAIL_DOMAIN>`); until then
 * these emails are refused by the send path and logged here.
 */
@Injectable()
export class SystemMailer {
  private readonly logger = new Logger(SystemMailer.name);
  private sender: Promise<SystemSender> | null = null;

  constructor(
    @Inject(PEOPLE_CONFIG.token) private readonly config: PeopleConfig,
    private readonly teams: TeamsService,
    private readonly domains: DomainsService,
    private readonly domainRows: DomainsRepository,
    private readonly send: SendService,
  ) {}

  /** The system team and its MAIL_DOMAIN domain, created once. */
  systemSender(): Promise<SystemSender> {
    this.sender ??= this.findOrCreate().catch((error: unknown) => {
      this.sender = null;
      throw error;
    });
    return this.sender;
  }

  async deliver(to: string, subject: string, text: string, html: string): Promise<string | null> {
    try {
      const sender = await this.systemSender();
      const team = await this.teams.get(sender.teamId);
      const plan = isPlanId(team.plan) ? team.plan : 'free';
      const reply = await this.send.send(
        { teamId: team.id, plan, homeRegion: team.homeRegion, restrictedDomainId: null, apiKeyId: null },
        { from: `Herald <${sender.from}>`, to: [to], subject, text, html },
        null,
      );
      return reply.id;
    } catch (error) {
      // A person waiting for a link must not get a 500 for it; the operator sees why in the log.
      this.logger.error(`dashboard email "${subject}" to ${to} not sent: ${error instanceof Error ? error.message : String(error)}`);
      return null;
    }
  }

  private async findOrCreate(): Promise<SystemSender> {
    const name = this.config.MAIL_DOMAIN;
    const from = `no-reply@${name}`;
    const existing = await this.domainRows.findAnyByName(name);
    if (existing) return { teamId: existing.teamId, domainId: existing.id, from };
    const team = await this.teams.create({ name: SYSTEM_TEAM_NAME });
    const created = await this.domains.create({ teamId: team.id, homeRegion: team.homeRegion }, { name });
    return { teamId: team.id, domainId: created.id, from };
  }
}
