/** The kinds of mail the service sends. */
export type MailKind = 'emailCode' | 'passwordChanged';

export interface MailMessage {
  kind: MailKind;
  subject: string;
  text: string;
}

/** The mail that carries a one-time code. */
export function emailCodeMessage(code: string, minutes: number): MailMessage {
  return {
    kind: 'emailCode',
    subject: 'Your agentexec code',
    text: [
      `Your one-time code is: ${code}`,
      '',
      `It is valid for ${minutes} minutes and can be used once. Enter it to set your password.`,
      'If you did not ask for it, ignore this mail: nothing changes until the code is used.',
    ].join('\n'),
  };
}

/** The notice sent after a password was set or reset with a code. */
export function passwordChangedMessage(): MailMessage {
  return {
    kind: 'passwordChanged',
    subject: 'Your agentexec password was changed',
    text: [
      'Your password was changed, and every signed-in session was signed out.',
      '',
      'If you did not do this, ask for a new code at once to set a password of your own, and tell your administrator.',
    ].join('\n'),
  };
}
