import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportFileExists, exportFilePath, openExportFile, removeExportFile, writeExportFile } from './files.ts';

const encoder = new TextEncoder();

async function* chunks(parts: string[], failAfter?: number): AsyncIterable<Uint8Array> {
  for (const [index, part] of parts.entries()) {
    if (index === failAfter) throw new Error('render failed');
    yield encoder.encode(part);
  }
}

test('a file is written whole, read back as a stream, and removed', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gather-export-files-'));
  try {
    const path = exportFilePath(3, 7, 'csv');
    assert.equal(path, join('3', '7.csv'));
    assert.equal(await writeExportFile(dataDir, path, chunks(['a,b\r\n', '1,2\r\n'])), 10);
    assert.equal(readFileSync(join(dataDir, 'exports', '3', '7.csv'), 'utf8'), 'a,b\r\n1,2\r\n');
    const opened = await openExportFile(dataDir, path);
    assert.equal(opened?.size, 10);
    opened?.stream.destroy();
    await removeExportFile(dataDir, path);
    assert.equal(await exportFileExists(dataDir, path), false);
    assert.equal(await openExportFile(dataDir, path), undefined);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a failed render leaves neither the file nor its partial copy', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gather-export-files-'));
  try {
    await assert.rejects(writeExportFile(dataDir, exportFilePath(1, 2, 'csv'), chunks(['a', 'b', 'c'], 2)), /render failed/);
    assert.deepEqual(readdirSync(join(dataDir, 'exports', '1')), []);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('stored paths cannot leave the exports directory', async () => {
  await assert.rejects(writeExportFile('/tmp', '../escape.csv', chunks([])), /leaves the exports directory/);
  await assert.rejects(removeExportFile('/tmp', '../../etc/passwd'), /leaves the exports directory/);
});
