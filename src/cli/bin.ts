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

async function main(): Promise<number> {
  const command = parseCommand(process.argv.slice(2));
  switch (command.kind) {
    case 'help':
      process.stdout.write(`${USAGE}\n`);
      return 0;
    case 'version':
      process.stdout.write(`${VERSION}\n`);
      return 0;
    case 'error':
      process.stderr.write(`billing-sdk: ${command.message}\nRun billing-sdk --help for usage.\n`);
      return 2;
    case 'relay': {
      const printer = new Printer(command.args.json);
      const stop = stopSignals(() => {
        printer.warn('stopped at once: what was being sent stays in the spool for the next relay');
        process.exit(1);
      });
      return relay(command.args, printer, stop);
    }
    case 'doctor':
      return doctor(command.spool, new Printer(command.json));
    case 'dead-letters':
      return deadLettersCommand(command.args, new Printer(command.args.json));
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    const failure = error instanceof CliFailure ? error : undefined;
    process.stderr.write(
      `billing-sdk: ${failure ? failure.message : `unexpected failure: ${messageOf(error)}`}\n`,
    );
    process.exit(failure?.exitCode ?? 1);
  },
);
