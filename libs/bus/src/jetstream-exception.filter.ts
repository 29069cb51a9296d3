import { Catch, RpcExceptionFilter } from '@nestjs/common';
import { Observable, throwError } from 'rxjs';

/**
 * Nest's default RPC exception filter replaces every non-RpcException with a generic
 * "Internal server error", which would hide a HeraldError's code from the JetStream transport.
 * This filter passes the handler's error through unchanged so the transport can map it
 * (see jetstream.settlement.ts). Register it on the microservice
 * (`app.useGlobalFilters(new JetStreamExceptionFilter())` before `listen()`) or on a controller
 * (`@UseFilters(JetStreamExceptionFilter)`).
 */
@Catch()
export class JetStreamExceptionFilter implements RpcExceptionFilter<unknown> {
  catch(exception: unknown): Observable<never> {
    return throwError(() => exception);
  }
}
