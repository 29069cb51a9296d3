const KEY = 'herald.team';

/** Remembers the team a person last worked in, so the dashboard's home opens on it next time. */
export function rememberTeam(teamId: string, storage: Pick<Storage, 'setItem'> | undefined = globalThis.localStorage): void {
  try {
    storage?.setItem(KEY, teamId);
  } catch {
    // Storage refused (private mode, quota): the home page falls back to the first team.
  }
}

/** The team the home page opens on: the one last worked in while still a member, else the first. */
export function homeTeam<T extends { id: string }>(
  teams: T[],
  storage: Pick<Storage, 'getItem'> | undefined = globalThis.localStorage,
): T | undefined {
  let last: string | null = null;
  try {
    last = storage?.getItem(KEY) ?? null;
  } catch {
    last = null;
  }
  return teams.find((t) => t.id === last) ?? teams[0];
}
