// Builds the greeting; the quickstart edits this file.
export function greet(name) {
  return `Hello, ${name}!`;
}
