import { Injectable } from '@nestjs/common';
import { PaddockError } from '@paddock/contracts';

/** Holds the OpenAPI document, built once after the app's routes are known (see createControlPlane). */
@Injectable()
export class OpenApiDocument {
  private document: object | undefined;

  set(document: object): void {
    this.document = document;
  }

  get(): object {
    if (!this.document) throw new PaddockError('unavailable', 'the OpenAPI document is not built yet');
    return this.document;
  }
}
