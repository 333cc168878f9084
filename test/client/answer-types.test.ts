/**
 * A route's declaration keeps its literal types, and its `answerSchema` types its handler's answer
 * (issue 52): a handler that answers something else does not compile. These are type-level checks;
 * `test/typecheck.test.ts` (tsc over the repository) fails on them, the runtime part is trivial.
 */
import * as v from 'valibot';
import { expectTypeOf, test } from 'vitest';
import { okReply } from '../../src/http/envelope.js';
import { route } from '../../src/http/router.js';

const Size = v.object({ size: v.number() });

test('a declaration keeps its method, path and schemas; its handler answers what answerSchema declares', () => {
  const declared = route({
    method: 'GET',
    path: '/v1/size/:id',
    auth: 'objects',
    summary: 'the size',
    params: v.object({ id: v.string() }),
    answerSchema: Size,
    handler: (_request, { params }) => okReply({ size: params.id.length }),
  });
  expectTypeOf(declared.method).toEqualTypeOf<'GET'>();
  expectTypeOf(declared.path).toEqualTypeOf<'/v1/size/:id'>();
  expectTypeOf(declared.answerSchema).toEqualTypeOf<typeof Size | undefined>();

  route({
    method: 'GET',
    path: '/v1/size',
    auth: 'objects',
    summary: 'a member of the wrong type',
    answerSchema: Size,
    // @ts-expect-error size is a number
    handler: () => okReply({ size: '14' }),
  });
  route({
    method: 'GET',
    path: '/v1/size',
    auth: 'objects',
    summary: 'a member missing',
    answerSchema: Size,
    // @ts-expect-error size is required
    handler: () => okReply({ bytes: 14 }),
  });
  // without an answerSchema, any answer
  route({ method: 'GET', path: '/v1/any', auth: 'objects', summary: 'anything', handler: () => okReply({ size: '14' }) });
});
