// Where workers report what the jobs table cannot hold: stacks of failed jobs, database trouble.
export type JobLog = (level: 'info' | 'warn' | 'error', message: string, error?: unknown) => void;

export const consoleJobLog: JobLog = (level, message, error) => {
  if (level === 'info') console.log(message);
  else if (error === undefined) console.error(message);
  else console.error(message, error);
};

export const silentJobLog: JobLog = () => {};

const MAX_MESSAGE_LENGTH = 2000;

/** A failed job's message for clients: the error's message, never its stack. */
export function jobErrorMessage(error: unknown): string {
  let text: string;
  if (error instanceof Error) text = error.message || error.name;
  else if (typeof error === 'string') text = error;
  else {
    try {
      text = JSON.stringify(error) ?? String(error);
    } catch {
      text = String(error);
    }
  }
  text = text.trim() || 'The job failed without a message.';
  return text.length > MAX_MESSAGE_LENGTH ? `${text.slice(0, MAX_MESSAGE_LENGTH - 1)}…` : text;
}
