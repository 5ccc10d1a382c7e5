import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { HttpError } from './errors.ts';
import { validationBody, type ValidationFailure } from './validation.ts';

/** Fastify's own client errors that we answer with a code of ours; their messages are safe to show. */
const FASTIFY_CLIENT_ERRORS: Readonly<Record<string, { status: number; code: string; message?: string }>> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'invalid_json', message: 'request body is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'invalid_json', message: 'request body is empty' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'payload_too_large' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    code: 'unsupported_media_type',
    message: 'send the body as Content-Type: application/json',
  },
  FST_ERR_MAX_PARAM_LENGTH: { status: 414, code: 'uri_too_long', message: 'a path parameter is too long' },
  FST_ERR_BAD_URL: { status: 400, code: 'invalid_request', message: 'the URL is not correctly encoded' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: 'invalid_request', message: 'Content-Length does not match the body' },
};

/**
 * An app's errors from other modules that mean "retry later", not "bug" (a store or a chain that did not
 * answer): the 503 to answer instead, or undefined for any other error. Their own messages may name internal
 * hosts or paths, so the answer carries a fixed one.
 */
export type OperationalErrors = (error: unknown) => HttpError | undefined;

export type ErrorHandler = (error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => FastifyReply;

/** The API's one error handler (set on the root instance; every scope inherits it), with the app's operational errors. */
export function createErrorHandler(operational: OperationalErrors = () => undefined): ErrorHandler {
  return (error, request, reply) => {
    // Errors raised before the onRequest hooks ran (a 414 from the router) have no trace header yet.
    reply.header('x-trace-id', request.id);
    if (error instanceof HttpError) {
      if (error.statusCode < 500) return reply.code(error.statusCode).headers(error.headers).send(error.body());
      request.log.warn({ code: error.code, err: error.cause ?? error }, 'request failed');
      return reply.code(error.statusCode).headers(error.headers).send({ ...error.body(), trace_id: request.id });
    }
    if (hasZodFastifySchemaValidationErrors(error)) {
      return reply.code(400).send(validationBody(error as unknown as ValidationFailure));
    }
    const fastifyCode = (error as FastifyError).code;
    const known = fastifyCode !== undefined ? FASTIFY_CLIENT_ERRORS[fastifyCode] : undefined;
    if (known) return reply.code(known.status).send({ error: known.code, message: known.message ?? error.message });
    const unavailable = operational(error);
    if (unavailable) {
      request.log.error({ err: error }, 'operational failure');
      return reply.code(unavailable.statusCode).headers(unavailable.headers).send({ ...unavailable.body(), trace_id: request.id });
    }
    // Other 4xx errors raised by Fastify itself (codes FST_*) describe the request, not our internals.
    const status = (error as FastifyError).statusCode;
    if (fastifyCode?.startsWith('FST_') && !isResponseSerializationError(error) && status !== undefined && status >= 400 && status < 500) {
      return reply.code(status).send({ error: 'invalid_request', message: error.message });
    }
    // Anything else is a bug or an outage we did not anticipate: log everything, tell the client nothing
    // beyond a trace id that support can find in the logs. Response-serialization failures land here too.
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send({ error: 'internal_error', message: 'internal error', trace_id: request.id });
  };
}

export function handleNotFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply.code(404).send({ error: 'not_found', message: `no route ${request.method} ${request.url.split('?')[0]}` });
}
