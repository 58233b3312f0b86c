/**
 * What a route tells the request pipeline about itself, in fastify's route `config`: the routes
 * (`*Routes.ts`, `management.ts`) set it, the guards (`guards.ts`) read it.
 */
export interface RouteMeta {
  /** Management routes: their dialect. Job routes leave it out. */
  dialect?: "v1" | "v2";
  /** Job routes: the operation segment (`run`, `status`, ...), naming the rate-limit row. */
  op?: string;
  /** A v2 document path the emulator routes only to answer 405/501 (so no `:id` route takes it). */
  unserved?: boolean;
}
