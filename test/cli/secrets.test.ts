// No line the bin prints, on stdout or stderr, text or JSON, quotes a secret of a spool URL: the
// user-info password, node-postgres's `password` and `sslpassword` query parameters, a Redis URL's
// password; against a real PostgreSQL and redis-server, reachable and not.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redactUrl, urlSecrets } from '../../src/cli/url-secrets.js';
import { usePostgres } from '../postgres/cluster.js';
import { useRedisServer } from '../redis/redis-server.js';
import { run, useCli } from './helpers.js';

const cli = useCli();
const postgres = usePostgres();
const redis = useRedisServer();

const SECRET = 'Hunter2_pw';
const SSL_SECRET = 'Ssl_pw_77';
const printed = (result: { stdout: string; stderr: string }) => result.stdout + result.stderr;

/** The cluster's URL with secrets in every place a driver reads them from. */
function withSecrets(url: string): string {
  const parsed = new URL(url);
  parsed.username = parsed.username || 'postgres';
  parsed.password = SECRET;
  parsed.searchParams.set('sslpassword', SSL_SECRET);
  return parsed.toString();
}

describe('the bin never prints a secret of a URL', () => {
  it.each([
    ['doctor', []],
    ['doctor', ['--json']],
    ['dead-letters', ['list']],
    ['dead-letters', ['list', '--json']],
  ])(
    '%s %j on a reachable PostgreSQL with a password in the user-info and the query',
    async (name, extra) => {
      const url = new URL(postgres.cluster.url);
      url.searchParams.set('password', SECRET);
      url.searchParams.set('sslpassword', SSL_SECRET);
      const result = await run(cli, [name, ...extra, '--postgres', url.toString()]);
      if (name === 'doctor') expect(printed(result)).toContain('password=***');
      expect(printed(result)).not.toContain(SECRET);
      expect(printed(result)).not.toContain(SSL_SECRET);
    },
  );

  it.each([
    ['relay', ['--once']],
    ['doctor', []],
    ['dead-letters', ['list']],
  ])('%s %j on a PostgreSQL out of reach', async (name, extra) => {
    const url = `postgres://app:${SECRET}@127.0.0.1:1/db?password=${SECRET}&sslpassword=${SSL_SECRET}`;
    const result = await run(cli, [name, ...extra, '--postgres', url]);
    expect(result.code).not.toBe(0);
    expect(printed(result)).toContain('127.0.0.1:1');
    expect(printed(result)).not.toContain(SECRET);
    expect(printed(result)).not.toContain(SSL_SECRET);
  });

  it('a password that is also in the user-info, URL-encoded', async () => {
    const url = withSecrets(postgres.cluster.url).replace(SECRET, 'a%2Fb%40c');
    const result = await run(cli, ['doctor', '--postgres', url]);
    expect(printed(result)).not.toMatch(/a%2Fb%40c|a\/b@c/);
  });

  it.each([
    ['doctor', []],
    ['relay', ['--once']],
    ['dead-letters', ['list', '--json']],
  ])('%s %j on a Redis with a password it does not expect', async (name, extra) => {
    const url = new URL(redis.server.url);
    url.username = 'default';
    url.password = SECRET;
    const result = await run(cli, [name, ...extra, '--redis', url.toString()]);
    expect(printed(result)).not.toContain(SECRET);
  });

  it('a usage error quoting a URL', async () => {
    const result = await run(cli, ['relay', `postgres://u:${SECRET}@h/db`, '--dir', '/tmp/none']);
    expect(result.code).toBe(2);
    expect(result.stderr).not.toContain(SECRET);
  });
});

describe('redactUrl and urlSecrets', () => {
  const token = fc.stringMatching(/^[A-Za-z0-9_]{6,20}$/);
  it('mask the user-info password and every password-bearing query parameter', () => {
    fc.assert(
      fc.property(
        token,
        token,
        fc.constantFrom('password', 'sslpassword', 'PASSWORD', 'token'),
        fc.constantFrom('postgres', 'postgresql', 'redis', 'rediss'),
        (pass, query, name, scheme) => {
          const url = `${scheme}://user:${pass}@db.example:5432/app?${name}=${query}&application_name=x`;
          const shown = redactUrl(url);
          expect(shown).not.toContain(pass);
          expect(shown).not.toContain(query);
          expect(shown).toContain('application_name=x');
          expect(urlSecrets(url)).toEqual(expect.arrayContaining([pass, query]));
        },
      ),
    );
  });

  it("a Redis URL's lone user-info is a password to some clients: masked", () => {
    expect(redactUrl(`redis://${SECRET}@127.0.0.1:6379`)).toBe('redis://***@127.0.0.1:6379');
    expect(redactUrl('postgres://app@127.0.0.1/db')).toBe('postgres://app@127.0.0.1/db');
  });
});
