import { deliverWebhook, type RetryPolicy, type WebhookDelivery } from './deliver.js';
import type { MockWebhookPayload } from './payload.js';

/** The receiving end of the mock's webhooks, as tests see it. */
export interface MockWebhooks {
  /**
   * Sets the one URL webhooks are posted to, replacing any earlier one; deliveries already under
   * way finish at their old URL. Throws a TypeError for anything but an absolute http(s) URL.
   */
  register(url: string): void;
  /** Stops posting; later lifecycle changes still happen and are logged as not delivered. */
  unregister(): void;
  /** Finished deliveries, oldest first (the order they finished); copies, safe to keep. */
  deliveries(): WebhookDelivery[];
  /**
   * Posts a logged webhook again, byte for byte (same transaction_id), to the URL registered now:
   * what the processor does when a receiver's 200 was lost. Rejects for an unknown transaction_id.
   */
  redeliver(transactionId: string): Promise<WebhookDelivery>;
}

/** What the mock itself does with its webhooks, besides what tests see. */
export interface WebhookChannel {
  /** The surface handed to tests. */
  api: MockWebhooks;
  /** The URL registered now, if any (the control surface reports it). */
  current(): string | undefined;
  /** Delivers a payload to the registered URL (or logs it undelivered when none is). */
  send(payload: MockWebhookPayload): Promise<WebhookDelivery>;
  /** Abandons deliveries under way (their retries stop, they are not logged), e.g. on close. */
  cancel(): void;
  /** {@link cancel}, then back to the configured URL with an empty log. */
  reset(): void;
}

function checkedUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`Webhook URL must be absolute, got ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new TypeError(`Webhook URL must be http or https, got ${JSON.stringify(url)}`);
  }
  return url;
}

/** Creates the webhook registration, delivery log and sender of one mock. */
export function createWebhookChannel(options: {
  url: string | undefined;
  retry: RetryPolicy;
}): WebhookChannel {
  const initialUrl = options.url === undefined ? undefined : checkedUrl(options.url);
  let url = initialUrl;
  let controller = new AbortController();
  const log: WebhookDelivery[] = [];

  const send = async (payload: MockWebhookPayload): Promise<WebhookDelivery> => {
    const target = url;
    if (target === undefined) {
      const skipped: WebhookDelivery = { event: payload, url: '', delivered: false, attempts: [] };
      log.push(skipped);
      return structuredClone(skipped);
    }
    const { signal } = controller;
    const delivery = await deliverWebhook(target, payload, options.retry, signal);
    // A delivery abandoned by reset belongs to the previous test; keep it out of the new log.
    if (!signal.aborted) log.push(delivery);
    return structuredClone(delivery);
  };

  const cancel = (): void => {
    controller.abort();
    controller = new AbortController();
  };

  return {
    api: {
      register(next) {
        url = checkedUrl(next);
      },
      unregister() {
        url = undefined;
      },
      deliveries: () => structuredClone(log),
      async redeliver(transactionId) {
        const original = log.filter((d) => d.event.transaction_id === transactionId).at(-1);
        if (!original) throw new Error(`No webhook with transaction_id ${transactionId} has been sent`);
        return send(original.event);
      },
    },
    current: () => url,
    send,
    cancel,
    reset() {
      cancel();
      url = initialUrl;
      log.length = 0;
    },
  };
}
