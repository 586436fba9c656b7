// Outgoing e-mail. The default mailer writes messages to the log (development); a deployment
// can plug in SMTP or an API behind the same interface. Tests capture messages in memory.
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

export function createLogMailer(log: (line: string) => void): Mailer {
  return {
    async send(message) {
      log(`mail to ${message.to}: ${message.subject}\n${message.text}`);
    },
  };
}

export class MemoryMailer implements Mailer {
  readonly sent: MailMessage[] = [];
  async send(message: MailMessage): Promise<void> {
    this.sent.push(message);
  }
}
