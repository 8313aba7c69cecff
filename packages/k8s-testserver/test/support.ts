import { ApiException } from '@kubernetes/client-node';

/** The `Status` body of a failed client-node call (its body arrives as a JSON string). */
export async function statusOf(p: Promise<unknown>): Promise<{ code: number; reason?: string; message?: string; details?: { causes?: { reason?: string; message?: string; field?: string }[]; name?: string; kind?: string; group?: string } }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ApiException) {
      const body: unknown = typeof e.body === 'string' ? JSON.parse(e.body) : e.body;
      return body as never;
    }
    throw e;
  }
  throw new Error('expected the call to fail');
}
