// The part of autocannon 9's programmatic API the benches use (the package ships no types).
declare module 'autocannon' {
  namespace autocannon {
    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      p50: number;
      p90: number;
      p97_5: number;
      p99: number;
      p99_9: number;
      total?: number;
    }

    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      onResponse?: (status: number, body: string, context: Record<string, unknown>) => void;
      /** Called before each request is sent; answers the request to send (a path of its own, say). */
      setupRequest?: (request: Request, context: Record<string, unknown>) => Request;
    }

    interface Options {
      url: string;
      connections?: number;
      pipelining?: number;
      duration?: number;
      amount?: number;
      timeout?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      requests?: Request[];
      /** Requests per second over all connections (0: as fast as they answer). */
      overallRate?: number;
      workers?: number;
    }

    interface Result {
      url: string;
      connections: number;
      duration: number;
      latency: Histogram;
      requests: Histogram;
      throughput: Histogram;
      errors: number;
      timeouts: number;
      mismatches: number;
      non2xx: number;
      resets: number;
      '1xx': number;
      '2xx': number;
      '3xx': number;
      '4xx': number;
      '5xx': number;
      statusCodeStats: Record<string, { count: number }>;
      start: Date;
      finish: Date;
    }
  }

  function autocannon(options: autocannon.Options): Promise<autocannon.Result> & { stop(): void };
  export = autocannon;
}
