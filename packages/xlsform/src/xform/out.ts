// The XForm's text as it is written. A big form's XForm is millions of small pieces; held until
// the end (an array joined, or strings concatenated), every one of them survived the young
// generation's collections and was copied by them, only to be joined at the end. Here pieces are
// joined into a run of a few kilobytes, and each run is made flat (one string of characters) as
// soon as it is full: the pieces then die young, and only the runs are kept until the end.

/** Text held before a run is made flat (UTF-16 code units). */
const RUN = 8192;

export class XmlOut {
  private runs: string[] = [];
  private run = '';

  /** Appends markup or text that is already escaped. */
  add(text: string): void {
    this.run += text;
    if (this.run.length > RUN) this.flush();
  }

  private flush(): void {
    const run = this.run;
    // Reading a character of a concatenated string makes V8 copy it into one flat string.
    run.charCodeAt(0);
    this.runs.push(run);
    this.run = '';
  }

  /** Everything written, as a string. */
  text(): string {
    this.flush();
    return this.runs.join('');
  }
}
