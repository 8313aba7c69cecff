import 'reflect-metadata';
import { ConflictException, HttpException, NotFoundException } from '@nestjs/common';
import Fastify from 'fastify';
import { PaddockError } from '@paddock/contracts';
import { FRAMEWORK_STATUS_CODES, httpErrorToPaddock } from '../src';

describe('framework errors in the error model', () => {
  it('settles the statuses the apps used to disagree on: 409 already_exists, 413 invalid_argument, 405 unimplemented', () => {
    expect(httpErrorToPaddock(new ConflictException('taken')).code).toBe('already_exists');
    expect(httpErrorToPaddock(new HttpException('nope', 405)).code).toBe('unimplemented');
    const big = httpErrorToPaddock(new HttpException('too big', 413), { bodyLimitBytes: 1024 * 1024 });
    expect([big.code, big.httpStatus, big.message]).toEqual(['invalid_argument', 400, 'request body exceeds the 1048576 byte (1 MiB) limit']);
    expect(big.violations).toEqual([{ field: '(body)', rule: 'max_size', description: 'request body must be at most 1 MiB', limit: 1048576 }]);
    expect(FRAMEWORK_STATUS_CODES[409]).toBe('already_exists');
  });

  it('names the route of a 404, keeps a PaddockError as it is, and hides what it does not know', () => {
    expect(httpErrorToPaddock(new NotFoundException('Cannot GET /v1/nope'), { method: 'GET', url: '/v1/nope?x=1' }).message).toBe('no such route: GET /v1/nope');
    const own = new PaddockError('failed_precondition', 'stale etag');
    expect(httpErrorToPaddock(own)).toBe(own);
    const hidden = httpErrorToPaddock(new Error('connection to 10.0.0.5 refused'));
    expect([hidden.code, hidden.message]).toEqual(['internal', 'internal error; retry later or report the request id']);
  });

  it("maps Fastify's own refusals (oversized body, bad JSON, unknown media type) naming the field and the rule", async () => {
    const app = Fastify({ bodyLimit: 64 });
    app.post('/x', async () => ({ ok: true }));
    app.setErrorHandler((e, req, reply) => {
      const err = httpErrorToPaddock(e, { method: req.method, url: req.url, bodyLimitBytes: 64 });
      void reply.status(err.httpStatus).send(err.toBody());
    });
    try {
      const send = async (payload: string, type = 'application/json') =>
        (await app.inject({ method: 'POST', url: '/x', payload, headers: { 'content-type': type } })).json<{ code: string; details: { fieldViolations?: { field: string; rule: string }[] }[] }>();
      const violation = (b: Awaited<ReturnType<typeof send>>) => b.details.flatMap((d) => d.fieldViolations ?? []).map((v) => [v.field, v.rule]);
      const big = await send(JSON.stringify({ pad: 'x'.repeat(100) }));
      expect([big.code, violation(big)]).toEqual(['invalid_argument', [['(body)', 'max_size']]]);
      const bad = await send('{"a":');
      expect([bad.code, violation(bad)]).toEqual(['invalid_argument', [['(body)', 'json']]]);
      const media = await send('x', 'text/csv');
      expect([media.code, violation(media)]).toEqual(['invalid_argument', [['Content-Type', 'media_type']]]);
    } finally {
      await app.close();
    }
  });
});
