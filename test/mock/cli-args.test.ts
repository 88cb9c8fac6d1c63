import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_HOST, DEFAULT_PORT, parseCliArgs, USAGE } from '../../src/testing/cli/args.js';

const run = (argv: string[]) => {
  const command = parseCliArgs(argv);
  if (command.kind !== 'run') throw new Error(`expected a run, got ${JSON.stringify(command)}`);
  return command.options;
};
const error = (argv: string[]) => {
  const command = parseCliArgs(argv);
  if (command.kind !== 'error') throw new Error(`expected an error, got ${JSON.stringify(command)}`);
  return command.message;
};

describe('parseCliArgs', () => {
  it('defaults: port 4010 on 127.0.0.1, demo seed, human output, the mock keys', () => {
    expect(run([])).toEqual({
      port: DEFAULT_PORT,
      host: DEFAULT_HOST,
      seed: 'demo',
      apiKey: undefined,
      signingKey: undefined,
      webhookUrl: undefined,
      json: false,
    });
    expect(DEFAULT_PORT).toBe(4010);
    expect(DEFAULT_HOST).toBe('127.0.0.1');
  });

  it('reads every flag, as "--flag value" and as "--flag=value"', () => {
    const options = {
      port: 0,
      host: '0.0.0.0',
      seed: 'empty',
      apiKey: 'k-1',
      signingKey: 's=2',
      webhookUrl: 'http://127.0.0.1:3000/hooks?x=1',
      json: true,
    };
    expect(
      run([
        '--port',
        '0',
        '--host',
        '0.0.0.0',
        '--seed',
        'empty',
        '--api-key',
        'k-1',
        '--signing-key',
        's=2',
        '--webhook-url',
        'http://127.0.0.1:3000/hooks?x=1',
        '--json',
      ]),
    ).toEqual(options);
    expect(
      run([
        '--port=0',
        '--host=0.0.0.0',
        '--seed=empty',
        '--api-key=k-1',
        '--signing-key=s=2',
        '--webhook-url=http://127.0.0.1:3000/hooks?x=1',
        '--json',
      ]),
    ).toEqual(options);
  });

  it('the last occurrence of a flag wins; a value may start with "-" (not "--") or use "="', () => {
    expect(run(['--port', '1', '--port', '65535']).port).toBe(65535);
    expect(run(['--api-key', '-abc']).apiKey).toBe('-abc');
    expect(run(['--api-key=--abc']).apiKey).toBe('--abc');
  });

  it('help wins over everything, then version', () => {
    expect(parseCliArgs(['--help'])).toEqual({ kind: 'help' });
    expect(parseCliArgs(['--bogus', '-h'])).toEqual({ kind: 'help' });
    expect(parseCliArgs(['--version', '--help'])).toEqual({ kind: 'help' });
    expect(parseCliArgs(['--port', 'x', '--version'])).toEqual({ kind: 'version' });
    expect(USAGE).toContain('--port <n>');
    for (const flag of [
      '--host',
      '--seed',
      '--api-key',
      '--signing-key',
      '--webhook-url',
      '--json',
      '--version',
    ]) {
      expect(USAGE).toContain(flag);
    }
  });

  it.each([
    [['--bogus'], 'unknown flag "--bogus"'],
    [['--bogus=1'], 'unknown flag "--bogus"'],
    [['-p', '1'], 'unknown flag "-p"'],
    [['serve'], 'unexpected argument "serve"'],
    [['--json', '--', 'x'], 'unexpected argument "--"'],
    [['--port'], '--port needs a value'],
    [['--port='], '--port needs a value'],
    [['--port', '--json'], '--port needs a value'],
    [['--seed'], '--seed needs a value'],
    [['--json=yes'], '--json takes no value'],
    [['--port', 'abc'], 'bad port "abc": expected an integer from 0 to 65535'],
    [['--port', '65536'], 'bad port "65536": expected an integer from 0 to 65535'],
    [['--port', '-1'], 'bad port "-1": expected an integer from 0 to 65535'],
    [['--port', '1.5'], 'bad port "1.5": expected an integer from 0 to 65535'],
    [['--port', ' 80'], 'bad port " 80": expected an integer from 0 to 65535'],
    [['--seed', 'full'], 'bad seed "full": expected demo or empty'],
    [['--host', 'a b'], 'bad host "a b": expected an address or a host name'],
    [['--host', 'http://x'], 'bad host "http://x": expected an address or a host name'],
    [['--api-key', 'a b'], 'bad --api-key "a b": expected visible ASCII characters, no spaces'],
    [['--signing-key', 'é'], 'bad --signing-key "é": expected visible ASCII characters, no spaces'],
    [
      ['--webhook-url', 'localhost:3000'],
      'bad --webhook-url "localhost:3000": expected an absolute http(s) URL',
    ],
    [['--webhook-url', 'ftp://x/'], 'bad --webhook-url "ftp://x/": expected an absolute http(s) URL'],
    [['--webhook-url', '/hooks'], 'bad --webhook-url "/hooks": expected an absolute http(s) URL'],
  ])('%j is a usage error: %s', (argv, message) => {
    expect(error(argv)).toBe(message);
  });

  it('reports the first problem', () => {
    expect(error(['--seed', 'x', '--port', 'y'])).toBe('bad port "y": expected an integer from 0 to 65535');
    expect(error(['--nope', '--port', 'y'])).toBe('unknown flag "--nope"');
  });

  it('quotes what it reports on one line, even with newlines in the argument', () => {
    expect(error(['--seed', 'a\nb'])).toBe('bad seed "a\\nb": expected demo or empty');
  });

  it('property: any argv parses or is a one-line usage error; nothing throws', () => {
    const flag = fc.constantFrom(
      '--port',
      '--host',
      '--seed',
      '--api-key',
      '--signing-key',
      '--webhook-url',
      '--json',
      '--help',
      '-h',
      '--version',
      '--',
      '-',
      '--port=',
      '--json=1',
    );
    const value = fc.oneof(
      fc.string(),
      fc.constantFrom('0', '4010', '65535', '65536', 'demo', 'empty', 'http://127.0.0.1:1/x', 'ftp://x'),
      fc.string({ unit: 'binary' }),
    );
    const arg = fc.oneof(
      flag,
      value,
      fc.tuple(flag, value).map(([f, v]) => `${f}=${v}`),
    );
    fc.assert(
      fc.property(fc.array(arg, { maxLength: 12 }), (argv) => {
        const command = parseCliArgs(argv);
        expect(['run', 'help', 'version', 'error']).toContain(command.kind);
        if (command.kind === 'error') {
          expect(command.message.length).toBeGreaterThan(0);
          expect(command.message).not.toMatch(/[\r\n]/);
        }
        if (command.kind === 'run') {
          const { port, seed } = command.options;
          expect(Number.isInteger(port) && port >= 0 && port <= 65535).toBe(true);
          expect(['demo', 'empty']).toContain(seed);
        }
        if (argv.includes('--help') || argv.includes('-h')) expect(command.kind).toBe('help');
      }),
      { numRuns: 2000 },
    );
  });
});
