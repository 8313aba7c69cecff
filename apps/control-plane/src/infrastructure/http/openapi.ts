import type { SchemaObject } from '@nestjs/swagger';
import { z } from 'zod';

/** OpenAPI 3.0 schema of a zod schema (request side), so the document shows the rules the server enforces. */
export function openApiSchema(schema: z.ZodType, io: 'input' | 'output' = 'input'): SchemaObject {
  return z.toJSONSchema(schema, { target: 'openapi-3.0', io, unrepresentable: 'any' }) as SchemaObject;
}
