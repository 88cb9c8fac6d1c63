import { check } from '../core/checks.js';
import type { RequestOptions } from '../core/options.js';
import type { PagePromise } from '../core/pagination.js';
import type { ApiCore } from '../core/request.js';
import { envelope } from '../schemas/common.js';
import { type Product, ProductSchema } from '../schemas/product.js';

const ProductPage = envelope(ProductSchema);

/** `billing.products`: the catalog of the key's gateway. */
export class Products {
  readonly #core: ApiCore;

  /** @internal */
  constructor(core: ApiCore) {
    this.#core = core;
  }

  /**
   * Lists the products of the key's profile and gateway, ordered by title (one page).
   *
   * @example
   * ```ts
   * for await (const product of billing.products.list()) console.log(product.label_name, product.type);
   * ```
   */
  list(params: Record<string, never> = {}, options?: RequestOptions): PagePromise<Product> {
    return this.#core.list(
      {
        operation: 'products.list',
        schema: ProductPage,
        prepare: () => ({ path: 'products/', query: check('products.list', params, {}) }),
      },
      options,
    );
  }
}
