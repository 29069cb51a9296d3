import { Client } from 'pg';
import { loadConfig } from '@herald/config';
import { uniqueSuffix } from '@herald/testing';
import { runMigrations } from './data-source';
import { migrations } from './migrations';
import { planeOf } from './planes';

describe('runMigrations', () => {
  const config = loadConfig(process.env, { DATABASE_SCHEMA: `t_mig_${uniqueSuffix()}` });

  afterAll(async () => {
    const client = new Client({ connectionString: config.DATABASE_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${config.DATABASE_SCHEMA}" CASCADE`);
    await client.end();
  });

  it('applies each migration once when several processes migrate at the same moment', async () => {
    const runs = await Promise.all([runMigrations(config), runMigrations(config), runMigrations(config)]);
    expect(runs.flat()).toEqual(migrations.map((m) => new m().name));
    expect(await runMigrations(config)).toEqual([]);
  });

  it('compresses message bodies with lz4 (the Postgres of this machine has it)', async () => {
    const client = new Client({ connectionString: config.DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query(
        `SELECT c.relname || '.' || a.attname AS col, a.attcompression AS method
           FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = $1 AND (c.relname, a.attname) IN (('emails', 'html'), ('emails', 'text_body'), ('email_mime', 'mime'), ('email_attachments', 'content'))
          ORDER BY 1`,
        [config.DATABASE_SCHEMA],
      );
      expect(rows).toEqual(['email_attachments.content', 'email_mime.mime', 'emails.html', 'emails.text_body'].map((col) => ({ col, method: 'l' })));
    } finally {
      await client.end();
    }
  });

  it("leaves no foreign key between the control plane's tables and the email plane's (planes.ts)", async () => {
    // A region's email plane has a database of its own (issue 15): a key across planes would point at rows it does not hold.
    const client = new Client({ connectionString: config.DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query<{ child: string; parent: string }>(
        `SELECT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent
           FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
          WHERE c.contype = 'f' AND n.nspname = $1`,
        [config.DATABASE_SCHEMA],
      );
      const bare = (table: string) => table.replace(/^.*\./, '').replace(/"/g, '');
      const crossing = rows
        .map((r) => `${bare(r.child)} → ${bare(r.parent)}`)
        .filter((_, i) => planeOf(bare(rows[i].child)) !== planeOf(bare(rows[i].parent)));
      expect(rows.length).toBeGreaterThan(0);
      expect(crossing).toEqual([]);
    } finally {
      await client.end();
    }
  });
});
