// A file that cannot be read as an import: its message goes back to the client as onadata's error.
export class ImportFileError extends Error {
  override name = 'ImportFileError';
}
