import { describe, expect, it } from 'vitest';
import { InvalidRequestError, memoryHoldStore } from '../../src/index.js';
import { holdStoreContract } from './hold-contract.js';

holdStoreContract('memoryHoldStore', async () => {
  let now = 1_000_000;
  const store = memoryHoldStore({ now: () => now });
  return {
    store,
    advance: async (ms) => {
      now += ms;
    },
  };
});

// A test clock at the epoch (`now: () => 0`, fake timers set to 0) is a clock like any other.
holdStoreContract('memoryHoldStore on a clock started at the epoch', async () => {
  let now = 0;
  const store = memoryHoldStore({ now: () => now });
  return {
    store,
    advance: async (ms) => {
      now += ms;
    },
  };
});

describe('memoryHoldStore', () => {
  it('refuses options that are not its own before anything is kept', () => {
    expect(() => memoryHoldStore({ now: 5 as never })).toThrow(InvalidRequestError);
    expect(() => memoryHoldStore({ clock: Date.now } as never)).toThrow(/options.clock/);
  });
});
