// Preloaded with --allow-natives-syntax by test/unit/v8-flags.unit.test.ts: at exit, prints whether
// V8's Maglev tier is still on in this process.
process.on('exit', () => process.stderr.write(`maglev at exit: ${%IsMaglevEnabled()}\n`));
