import assert from 'node:assert/strict';
import { closeSync, openSync, writeSync } from 'node:fs';
import { parseProcIo, readSyscalls, syscallsPer } from '../../bench/syscalls.js';

/** How `bench:io` counts the system calls of web and worker per run (bench/syscalls.ts). */
describe('system calls per run', () => {
  const procIo = (reads: number, writes: number) =>
    `rchar: 6976\nwchar: 0\nsyscr: ${reads}\nsyscw: ${writes}\nread_bytes: 0\nwrite_bytes: 0\ncancelled_write_bytes: 0\n`;

  it('reads the counts of read and write calls from /proc/<pid>/io', () => {
    assert.deepEqual(parseProcIo(procIo(4502, 1296)), { reads: 4502, writes: 1296 });
    assert.equal(parseProcIo('rchar: 1\nwchar: 2\n'), null, 'no counts, no reading');
  });

  it('divides what was made between two readings by the runs made meanwhile', () => {
    assert.deepEqual(syscallsPer({ reads: 100, writes: 50 }, { reads: 4600, writes: 1350 }, 182), { reads: 24.7, writes: 7.1 });
    assert.equal(syscallsPer(null, { reads: 1, writes: 1 }, 10), null);
    assert.equal(syscallsPer({ reads: 1, writes: 1 }, { reads: 2, writes: 2 }, 0), null, 'no runs, no figure');
  });

  it("reads a live process's counts, which grow by the writes it makes", () => {
    const sink = openSync('/dev/null', 'w');
    try {
      const [before] = readSyscalls([process.pid]);
      assert.ok(before, 'this process has counts');
      for (let i = 0; i < 5; i++) writeSync(sink, 'x');
      const [after] = readSyscalls([process.pid]);
      assert.ok(after!.writes >= before.writes + 5, `${before.writes} → ${after!.writes}`);
      assert.ok(after!.reads > before.reads, 'reading the counts is a read');
    } finally {
      closeSync(sink);
    }
    assert.deepEqual(readSyscalls([2 ** 22 + 7]), [null], 'no such process');
  });
});
