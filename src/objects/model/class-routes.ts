/**
 * `PUT` and `DELETE /v1/model/classes/{className}` (PROTOCOL.md 6.12, *admin*): classes declared at run
 * time. The handlers only read the request; `runtime.ts` checks, stores and applies.
 */
import type { ModelContext } from './context.js';
import { classStructure } from './structure.js';
import type { AuthContext } from '../../auth/context.js';
import { okReply } from '../../http/envelope.js';
import { ApiError, clip } from '../../http/errors.js';
import { route } from '../../http/router.js';
import type { Access } from '../access.js';
import { MODEL_CLASSES } from './contract.js';

type ClassRoutesContext = ModelContext & Pick<AuthContext, 'principals'> & { readonly access: Access };


/** `400` for an internal class's name, `403` for a class the host declares. */
function declarable(ctx: ClassRoutesContext, className: string): void {
  if (ctx.internalClasses.has(className)) throw new ApiError('400', `${clip(className)} is an internal class of the service`);
  if (ctx.schema.isHostDeclared(className)) throw new ApiError('403', `${className} is declared by the host (its schema option) and read-only here`);
}


/**
 * The model's routes are for administrators; the request is checked first, with the input (as
 * `GET /v1/users` does): a malformed one is `400` for anyone.
 */
export function classDeclarationRoutes(ctx: ClassRoutesContext) {
  return [
    route({
      ...MODEL_CLASSES.putModelClassesByClassName,
      auth: 'objects',
      admin: true,
      summary: 'Declares a class at run time, or replaces its declaration (users.admins only); 409 with Violations and Examples when stored objects would not satisfy it',
      refine: ({ params: { className }, body: entry }) => {
        declarable(ctx, className);
        ctx.runtimeModel.check(className, entry);
      },
      examples: {
        body: { Fields: { Title: { Type: 'string', Required: true, MaxLength: 200 }, Priority: { Type: 'integer', Min: 1, Max: 5 }, Customer: { Type: 'ref', Class: 'Customer' } }, Indexes: ['Priority'], Description: 'Support tickets', Access: { read: ['*'], create: ['sales'], update: ['sales'], delete: ['admins'] } },
        answer: { Name: 'Ticket', ClassID: 1234567, Declared: true, Members: [{ Name: 'Title', Type: 'string', Required: true, MaxLength: 200 }], Indices: [{ Name: 'Ticket_Priority', Members: ['Priority'] }], Runtime: true, Strict: false, Description: 'Support tickets' },
      },
      answer: "the class's entry as GET /v1/model/structure gives it, with Runtime, Strict, Description and Access",
      errors: ['403', '409'],
      handler: async (_request, { params: { className }, body: entry }) => {
        if (entry.access !== undefined && ctx.access.hostNames(className)) throw new ApiError('403', `the access rule of ${className} is set by the host (its access option) and read-only here`);
        await ctx.runtimeModel.declare(className, entry);
        return okReply(classStructure(ctx, className));
      },
    }),
    route({
      ...MODEL_CLASSES.deleteModelClassesByClassName,
      auth: 'objects',
      admin: true,
      summary: 'Removes the run-time declaration of a class without objects (users.admins only)',
      refine: ({ params: { className } }) => declarable(ctx, className),
      answer: 'nothing ({})',
      errors: ['403', '404', '409'],
      handler: async (_request, { params: { className } }) => {
        await ctx.runtimeModel.remove(className);
        return okReply({});
      },
    }),
  ];
}
