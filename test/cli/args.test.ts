// billing-sdk's argument parser, a pure function: what each command line asks for, and the first
// problem of a bad one (the bin prints it and exits 2; test/cli/relay.test.ts runs a few of those).
import { describe, expect, it } from 'vitest';
import { parseCommand } from '../../src/cli/args.js';

describe('parseCommand', () => {
  it('relay: the spool, its options and the defaults', () => {
    expect(parseCommand(['relay', '--postgres', 'postgres://db/app', '--table', 't', '--once'])).toEqual({
      kind: 'relay',
      args: {
        spool: {
          kind: 'postgres',
          url: 'postgres://db/app',
          table: 't',
          schema: undefined,
          consumer: undefined,
        },
        once: true,
        concurrency: undefined,
        graceMs: 10_000,
        intervalMs: undefined,
        stallMs: 60_000,
        json: false,
      },
    });
    expect(
      parseCommand(['relay', '--redis=redis://r:6379', '--cluster', '--consumer', 'pod-1', '--grace', '0']),
    ).toMatchObject({
      kind: 'relay',
      args: { spool: { kind: 'redis', url: 'redis://r:6379', cluster: true, consumer: 'pod-1' }, graceMs: 0 },
    });
  });

  it('doctor: spool flags optional; dead-letters: an action and ids or --all', () => {
    expect(parseCommand(['doctor', '--json'])).toEqual({ kind: 'doctor', spool: undefined, json: true });
    expect(parseCommand(['dead-letters', 'replay', '1', '2', '--dir', '/s'])).toEqual({
      kind: 'dead-letters',
      args: { action: 'replay', spool: { kind: 'file', dir: '/s' }, ids: ['1', '2'], json: false },
    });
    expect(parseCommand(['dead-letters', 'drop', '--all', '--dir', '/s'])).toMatchObject({
      args: { ids: 'all' },
    });
  });

  it('--help wins, then --version', () => {
    expect(parseCommand(['relay', '--nope', '--help'])).toEqual({ kind: 'help' });
    expect(parseCommand(['relay', '--nope', '--version'])).toEqual({ kind: 'version' });
    expect(parseCommand(['relay', '--help'])).toEqual({ kind: 'help' });
    expect(parseCommand(['-h'])).toEqual({ kind: 'help' });
    expect(parseCommand(['--version'])).toEqual({ kind: 'version' });
  });

  it.each([
    [[], 'which command?'],
    [['send'], 'unknown command "send"'],
    [['relay'], 'which spool?'],
    [['relay', '--dir'], "'--dir"],
    [['relay', '--dir', ''], '--dir needs a value'],
    [['relay', '--dir', 'a', '--postgres', 'postgres://x'], 'give one spool, not --postgres and --dir'],
    [['relay', '--dir', 'a', '--stream', 's'], '--stream needs --redis'],
    [['relay', '--dir', 'a', '--consumer', 'c'], '--consumer needs --postgres or --redis'],
    [['relay', '--redis', 'postgres://x'], 'bad --redis URL'],
    [['relay', '--dir', 'a', '--concurrency', '2000'], 'bad --concurrency "2000"'],
    [['relay', '--dir', 'a', '--interval', '1.5'], 'bad --interval'],
    [['relay', '--dir', 'a', 'extra'], 'unexpected argument "extra"'],
    [['doctor', '--once'], '--once is not an option of doctor'],
    [['doctor', '--all'], '--all is not an option of doctor'],
  ])('%j is refused: %s', (argv, message) => {
    const command = parseCommand(argv);
    expect(command.kind).toBe('error');
    expect((command as { message: string }).message).toContain(message);
  });
});
