// `agentscm --data-dir D <command> ...` as the spec writes it: a leading --data-dir (or
// --data-dir=D) is moved into AGENTSCM_DATA_DIR, which every command's --data-dir reads.
export function takeLeadingDataDir(args) {
  const argv = [...args];
  while (argv.length > 0 && argv[0] !== undefined && argv[0].startsWith('--data-dir')) {
    const head = argv.shift();
    if (head === '--data-dir') {
      const value = argv.shift();
      if (value === undefined || value.startsWith('-')) {
        process.stderr.write('error[USAGE]: --data-dir needs a directory; run `agentscm --help`\n');
        process.exit(2);
      }
      process.env.AGENTSCM_DATA_DIR = value;
    } else {
      process.env.AGENTSCM_DATA_DIR = head.slice('--data-dir='.length);
    }
  }
  return argv;
}
