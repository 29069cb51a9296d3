import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** Whether Postgres answers, for the readiness of the roles that use it (like RedisService.ping). */
@Injectable()
export class PostgresHealth {
  constructor(private readonly db: DataSource) {}

  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
  }
}
