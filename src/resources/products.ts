import type { RequestOptions } from '../core/options.js';
import type { PagePromise } from '../core/pagination.js';
import { endpoint } from '../internal/endpoint.js';
import { APIResource } from '../internal/resource.js';
import { envelope } from '../schemas/common.js';
import { type Product, ProductSchema } from '../schemas/product.js';

const listProducts = endpoint({
  operation: 'products.list',
  method: 'GET',
  // The reference documents no parameters: any key is refused rather than sent.
  rules: {},
  build: () => ({ path: 'products/' }),
  schema: envelope(ProductSchema),
});

/** `billing.products`: the catalog of the key's gateway. */
export class Products extends APIResource {
  /**
   * Lists the products of the key's profile and gateway, ordered by title (one page).
   *
   * @example
   * ```ts
   * for await (const product of billing.products.list()) console.log(product.label_name, product.type);
   * ```
   */
  list(params?: Record<string, never>, options?: RequestOptions): PagePromise<Product> {
    return this._list(listProducts, params, options);
  }
}
