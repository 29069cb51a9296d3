/** `--name Acme --region eu-west-1` → { name: 'Acme', region: 'eu-west-1' }; `--flag` alone → 'true'. */
export function parseFlags(argv: string[]): { positional: string[]; flags: Record<string, string> } {
  const positional: string[] = [];
  const flags: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const [name, inline] = arg.slice(2).split('=', 2);
    if (inline !== undefined) flags[name] = inline;
    else if (argv[i + 1] !== undefined && !argv[i + 1].startsWith('--')) flags[name] = argv[++i];
    else flags[name] = 'true';
  }
  return { positional, flags };
}

export class UsageError extends Error {}

export function requireFlag(flags: Record<string, string>, name: string): string {
  const value = flags[name];
  if (!value || value === 'true') throw new UsageError(`--${name} is required`);
  return value;
}
