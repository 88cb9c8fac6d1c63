#!/usr/bin/env node
/**
 * `billing-sdk`: the operator's commands (`relay`, `dead-letters`, `doctor`). Process wiring only:
 * arguments are parsed by `args.ts`, each command is its own module, and a {@link CliFailure} is
 * one line on stderr with its exit code (2: bad usage or a spool out of reach).
 */
import { VERSION } from '../version.js';
import { parseCommand, USAGE } from './args.js';
import { deadLettersCommand } from './dead-letters.js';
import { doctor } from './doctor.js';
import { CliFailure, messageOf } from './fail.js';
import { Printer } from './printer.js';
import { relay } from './relay.js';
import { stopSignals } from './signals.js';
import { flagSecrets, masked, urlSecrets } from './url-secrets.js';

/** What no line of this run may print: the secrets of the spool URL it was given. */
let secrets: readonly string[] = [];

async function main(): Promise<number> {
  const command = parseCommand(process.argv.slice(2));
  // A usage error names no flag's value, but a URL given where another was expected may be quoted.
  secrets = process.argv.filter((arg) => URL.canParse(arg)).flatMap(urlSecrets);
  if (command.kind === 'error') {
    process.stderr.write(
      `billing-sdk: ${masked(command.message, secrets)}\nRun billing-sdk --help for usage.\n`,
    );
    return 2;
  }
  secrets = flagSecrets(
    command.kind === 'relay' || command.kind === 'dead-letters'
      ? command.args.spool
      : command.kind === 'doctor'
        ? command.spool
        : undefined,
  );
  switch (command.kind) {
    case 'help':
      process.stdout.write(`${USAGE}\n`);
      return 0;
    case 'version':
      process.stdout.write(`${VERSION}\n`);
      return 0;
    case 'relay': {
      const printer = new Printer(command.args.json, process, secrets);
      const stop = stopSignals(() => {
        printer.warn('stopped at once: what was being sent stays in the spool for the next relay');
        process.exit(1);
      });
      return relay(command.args, printer, stop);
    }
    case 'doctor':
      return doctor(command.spool, new Printer(command.json, process, secrets));
    case 'dead-letters':
      return deadLettersCommand(command.args, new Printer(command.args.json, process, secrets));
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    const failure = error instanceof CliFailure ? error : undefined;
    const line = failure ? failure.message : `unexpected failure: ${messageOf(error)}`;
    process.stderr.write(`billing-sdk: ${masked(line, secrets)}\n`);
    process.exit(failure?.exitCode ?? 1);
  },
);
