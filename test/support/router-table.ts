import type { FastifyInstance } from 'fastify';

/** Every route the Fastify router holds, from its own table (printRoutes), as `method /path/{param}`. */
export function routerTable(fastify: FastifyInstance): string[] {
  const lines = fastify.printRoutes({ commonPrefix: false, includeMeta: false }).split('\n');
  const stack: string[] = [];
  const routes: string[] = [];
  for (const line of lines) {
    const match = /^([│ ]*)(?:[└├]── )?(\S*) \(([A-Z, ]+)\)$|^([│ ]*)(?:[└├]── )(\S+)$/.exec(line);
    if (!match) continue;
    const indent = (match[1] ?? match[4] ?? '').length;
    const depth = indent / 4;
    stack.length = depth;
    stack.push(match[2] ?? match[5] ?? '');
    if (!match[3]) continue;
    const path = stack
      .join('')
      .replace(/\/+/g, '/')
      .replace(/:(\w+)/g, '{$1}');
    for (const method of match[3].split(', ')) routes.push(`${method.toLowerCase()} ${path}`);
  }
  return routes;
}
