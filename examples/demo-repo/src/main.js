import { greet } from './greet.js';

process.stdout.write(`${greet(process.argv[2] ?? 'world')}\n`);
