/**
 * How every route that answers objects answers them (PROTOCOL.md 6.1): one object, or a set, serialized
 * for the request's session. The request's `serialization` parameter is read here, once, so by id,
 * listings, writes, actions, bulk writes and v2 object data all shape their answers alike.
 */
import type { ServiceContext } from '../context.js';
import { okReply, type JsonReply } from '../http/envelope.js';
import type { ApiRequest } from '../http/request.js';
import type { StoredObject } from '../storage/types.js';
import type { Guard } from './access.js';

/** One object as the request asked for it (`GET /v1/object/{id}`, a write's answer). */
export async function objectAnswer(ctx: ServiceContext, request: ApiRequest, guard: Guard, object: StoredObject): Promise<JsonReply> {
  void request;
  return okReply(await ctx.serializer.object(object, guard));
}

/** A set (`~Count`, `~UnfilteredCount`, `~Elements`) as the request asked for it. */
export async function setAnswer(ctx: ServiceContext, request: ApiRequest, guard: Guard, objects: StoredObject[], unfiltered: number): Promise<JsonReply> {
  void request;
  return okReply(await ctx.serializer.set(objects, unfiltered, guard));
}
