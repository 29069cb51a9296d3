import { useMutation, useQuery, useQueryClient, type UseQueryOptions } from '@tanstack/react-query';
import { useParams } from '@tanstack/react-router';
import { api, type Query } from './api';
import { isProvider, type Provider } from './provider-errors';
import type { Me, Regions, SignInProviders } from './types';

export function useMe() {
  return useQuery({ queryKey: ['me'], queryFn: () => api<Me>('/me'), staleTime: 30_000 });
}

export function useRegions() {
  return useQuery({ queryKey: ['regions'], queryFn: () => api<Regions>('/regions'), staleTime: Infinity });
}

/** The providers this Herald offers (a client id configured), in the order it lists them. */
export function useSignInProviders() {
  return useQuery({
    queryKey: ['sign-in-providers'],
    queryFn: async (): Promise<Provider[]> => (await api<SignInProviders>('/sign-in-providers')).data.filter(isProvider),
    staleTime: Infinity,
  });
}

/** The team in the URL (`/t/:teamId/…`). */
export function useTeamId(): string {
  const params = useParams({ strict: false }) as { teamId?: string };
  return params.teamId ?? '';
}

export function useTeam() {
  const teamId = useTeamId();
  const me = useMe();
  return me.data?.teams.find((team) => team.id === teamId);
}

/** True when the signed-in person may change things in this team (admins and owners). */
export function useCanWrite(): boolean {
  const role = useTeam()?.role;
  return role === 'owner' || role === 'admin';
}

/** GET /teams/:teamId<path>, keyed by team, path and query. */
export function useTeamQuery<T>(path: string, query?: Query, options: Partial<UseQueryOptions<T>> = {}) {
  const teamId = useTeamId();
  return useQuery<T>({
    queryKey: ['team', teamId, path, query ?? {}],
    queryFn: () => api<T>(`/teams/${teamId}${path}`, { query }),
    enabled: Boolean(teamId),
    ...options,
  });
}

/** A state change on /teams/:teamId/…; on success the team's queries under `invalidate` are refetched. */
export function useTeamMutation<T, V = void>(request: (variables: V) => { method: string; path: string; body?: unknown }, invalidate: string[] = []) {
  const teamId = useTeamId();
  const client = useQueryClient();
  return useMutation<T, Error, V>({
    mutationFn: (variables) => {
      const { method, path, body } = request(variables);
      return api<T>(`/teams/${teamId}${path}`, { method, body });
    },
    onSuccess: async () => {
      await Promise.all(
        invalidate.map((path) =>
          client.invalidateQueries({
            predicate: (q) => q.queryKey[0] === 'team' && q.queryKey[1] === teamId && String(q.queryKey[2]).startsWith(path),
          }),
        ),
      );
    },
  });
}
