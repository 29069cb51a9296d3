import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as ts from 'typescript';
import { CONTROL_PLANE_TABLES, EMAIL_PLANE_TABLES, planeOf } from '@herald/database';

// The census of SQL that reads or writes both planes in one statement (issue 15): once each
// region's email plane has its own database, no statement can. Every SQL text in the production
// code (apps, libs; not specs, not migrations) is read with the TypeScript parser, its tables
// named after FROM, JOIN, UPDATE and INTO are sorted into planes (libs/database planes.ts), and the
// statements naming both are compared with the list below. A new crossing fails here; so does one
// that was removed without striking it from the list, which therefore only shrinks. It reads
// tables named after a keyword only: a second table after a comma (`FROM a x, b y`) is not seen.

const root = join(__dirname, '..', '..');

/**
 * file → the tables of both planes its crossing statements name, with what will replace each. None
 * is left: the last two (webhook messages joining their webhooks, a broadcast's ledger read beside
 * the broadcast) now read the other plane in statements of their own.
 */
const KNOWN_CROSSINGS: { file: string; tables: string[]; plan: string }[] = [];

const SQL = /\b(SELECT|INSERT|UPDATE|DELETE)\b/;
const TABLE = /\b(?:FROM|JOIN|UPDATE|INTO)\s+(?:ONLY\s+)?(?:"?[A-Za-z_$]+"?\.)?"?([a-z_]+)"?/gi;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'migrations' || entry.name === 'node_modules' ? [] : sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !/\.(spec|int-spec|e2e-spec)\.ts$/.test(entry.name) ? [path] : [];
  });
}

/** The text of every string and template literal of a file (a template's holes as `?`). */
function literals(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) found.push(node.text);
    else if (ts.isTemplateExpression(node)) found.push([node.head.text, ...node.templateSpans.map((s) => `? ${s.literal.text}`)].join(''));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Tables of both planes named by one statement. */
function crossing(sql: string): string[] | null {
  if (!SQL.test(sql)) return null;
  const tables = new Set([...sql.matchAll(TABLE)].map((m) => m[1].toLowerCase()).filter((t) => planeOf(t) !== null));
  const planes = new Set([...tables].map(planeOf));
  return planes.size > 1 ? [...tables].sort() : null;
}

function census(): Map<string, string[]> {
  const byFile = new Map<string, Set<string>>();
  for (const file of [...sourceFiles(join(root, 'apps')), ...sourceFiles(join(root, 'libs'))]) {
    for (const text of literals(file)) {
      const tables = crossing(text);
      if (!tables) continue;
      const name = relative(root, file);
      const set = byFile.get(name) ?? new Set<string>();
      tables.forEach((t) => set.add(t));
      byFile.set(name, set);
    }
  }
  return new Map([...byFile].map(([file, tables]) => [file, [...tables].sort()]));
}

/**
 * Files whose SQL names email-plane tables and whose class takes TypeORM's DataSource, which is
 * the control plane's database (libs/database DatabaseModule), and not EmailPlanes: each must
 * reach its email-plane rows through EmailPlanes. The list only shrinks.
 */
const EMAIL_PLANE_ON_CONTROL_DATASOURCE: string[] = [];

/** Files whose SQL names a table of the email plane. */
function emailPlaneFiles(): string[] {
  return [...sourceFiles(join(root, 'apps')), ...sourceFiles(join(root, 'libs'))].filter((file) =>
    literals(file).some((text) => SQL.test(text) && [...text.matchAll(TABLE)].some((m) => planeOf(m[1].toLowerCase()) === 'email')),
  );
}

describe('the census of SQL crossing the control and email planes', () => {
  it('puts every table the migrations create in exactly one plane', () => {
    const dir = join(root, 'libs/database/src/migrations');
    const created = new Set(
      readdirSync(dir)
        .filter((f) => f.endsWith('.ts'))
        .flatMap((f) =>
          [...readFileSync(join(dir, f), 'utf8').matchAll(/CREATE (?:UNLOGGED )?TABLE (?:IF NOT EXISTS )?"?([a-z_]+)/g)].map((m) => m[1]),
        ),
    );
    const named = [...EMAIL_PLANE_TABLES, ...CONTROL_PLANE_TABLES];
    expect(new Set(named).size).toBe(named.length);
    expect([...created].sort()).toEqual([...named].sort());
  });

  it('finds exactly the known crossings, no new one and none already gone', () => {
    const found = Object.fromEntries(census());
    const known = Object.fromEntries(KNOWN_CROSSINGS.map((c) => [c.file, c.tables]));
    expect(found).toEqual(known);
  });

  it("has every email-plane statement's class reach its database through EmailPlanes, not the control plane's DataSource", () => {
    const onControl = emailPlaneFiles()
      .filter((file) => {
        const text = readFileSync(file, 'utf8');
        return /constructor\s*\([^)]*:\s*DataSource\b/s.test(text) && !/constructor\s*\([^)]*:\s*EmailPlanes\b/s.test(text);
      })
      .map((file) => relative(root, file))
      .sort();
    expect(onControl).toEqual([...EMAIL_PLANE_ON_CONTROL_DATASOURCE].sort());
  });

  it('tells a crossing statement from a one-plane one', () => {
    expect(crossing('SELECT e.id FROM emails e JOIN domains d ON d.team_id = e.team_id')).toEqual(['domains', 'emails']);
    expect(crossing('UPDATE "${schema}".emails SET x = 1 WHERE id IN (SELECT email_id FROM email_recipients)')).toBeNull();
    expect(crossing('SELECT 1 FROM teams t JOIN api_keys k ON k.team_id = t.id')).toBeNull();
    expect(crossing('the emails from domains')).toBeNull();
  });
});
