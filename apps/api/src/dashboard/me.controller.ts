import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { CONFIG, HeraldConfig } from '@herald/config';
import { type Actor, configuredProviders, PeopleService, type SessionUser } from '@herald/people';
import { parseAuditPage, presentAuditPage } from './audit-log.page';
import { CurrentActor, CurrentUser, DashboardController } from './dashboard.guard';

/** Who is signed in, their teams, and the regions a team can live in. */
@DashboardController()
@Controller('dashboard/api')
export class MeController {
  constructor(private readonly people: PeopleService) {}

  @Get('me')
  async me(@CurrentUser() user: SessionUser) {
    const record = await this.people.user(user.id);
    return {
      user: {
        id: user.id,
        email: user.email,
        name: user.name,
        email_verified: record?.emailVerified ?? user.emailVerified,
        two_factor_enabled: record?.twoFactorEnabled ?? Boolean(user.twoFactorEnabled),
      },
      teams: await this.people.teamsOf(user.id),
    };
  }

  /** The Account page's log: the signed-in person's own sign-ins, MFA, password, linked-account and session changes. */
  @Get('me/audit-log')
  async accountLog(@CurrentUser() user: SessionUser, @Query() query: unknown) {
    const page = parseAuditPage(query);
    return presentAuditPage(await this.people.accountLog(user.id, page.limit + 1, page.after), page.limit);
  }

  @Post('teams')
  @HttpCode(201)
  createTeam(@CurrentActor() actor: Actor, @Body() body: unknown) {
    return this.people.createTeam(actor, body);
  }

  @Post('invitations/:token/accept')
  @HttpCode(200)
  async accept(@CurrentActor() actor: Actor, @Param('token') token: string) {
    return { team: await this.people.acceptInvitation(actor, token) };
  }
}

/** Public: the sign-up form offers these. */
@ApiExcludeController()
@Controller('dashboard/api/regions')
export class RegionsController {
  constructor(@Inject(CONFIG) private readonly config: HeraldConfig) {}

  @Get()
  regions() {
    const regions = this.config.HERALD_REGIONS;
    return { data: regions, default: regions.includes('us-east-1') ? 'us-east-1' : regions[0] };
  }
}

/** Public: the sign-in and Account pages offer a button for each provider configured here (a client id set). */
@ApiExcludeController()
@Controller('dashboard/api/sign-in-providers')
export class SignInProvidersController {
  constructor(@Inject(CONFIG) private readonly config: HeraldConfig) {}

  @Get()
  providers() {
    return { data: configuredProviders(this.config) };
  }
}
